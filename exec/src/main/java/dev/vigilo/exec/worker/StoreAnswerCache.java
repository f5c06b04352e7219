package dev.vigilo.exec.worker;

import dev.vigilo.agent.AnswerCache;
import dev.vigilo.common.errors.UnavailableException;
import dev.vigilo.storage.Deadline;
import dev.vigilo.storage.ObjectConflictException;
import dev.vigilo.storage.ObjectInfo;
import dev.vigilo.storage.ObjectIntegrityException;
import dev.vigilo.storage.ObjectKey;
import dev.vigilo.storage.ObjectNotFoundException;
import dev.vigilo.storage.ObjectRef;
import dev.vigilo.storage.ObjectStore;
import dev.vigilo.storage.Sha256;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The answer cache of http agents with {@code agent.cache: true} (docs/formats/agent-protocol.md, "Answer cache"),
 * kept in the run's object store, create-only, under {@code cache/chat/<hh>/<request key>/<answer sha256>.json}:
 * every run in the same store shares it. The answer's digest is in its key, so a read is verified against it
 * (listing gives the length); should two workers keep different answers to one request, the first in key order is
 * the one used, everywhere. Unreadable or unwritable objects are misses and dropped writes (logged): the cache saves
 * calls, it never fails a case.
 */
final class StoreAnswerCache implements AnswerCache {
    private static final Logger LOG = LoggerFactory.getLogger(StoreAnswerCache.class);
    private static final Duration IO = Duration.ofSeconds(30);
    private static final String SUFFIX = ".json";

    private final ObjectStore store;

    StoreAnswerCache(ObjectStore store) {
        this.store = store;
    }

    static String prefix(String requestKey) {
        return "cache/chat/" + requestKey.substring(0, 2) + "/" + requestKey + "/";
    }

    @Override
    public Optional<byte[]> get(String key) {
        try {
            List<ObjectInfo> kept = store.list(prefix(key), Deadline.after(IO));
            if (kept.isEmpty()) {
                return Optional.empty();
            }
            ObjectInfo first = kept.get(0);
            String name = first.key().value().substring(prefix(key).length());
            if (!name.endsWith(SUFFIX)) {
                return Optional.empty();
            }
            Sha256 sha = Sha256.parseHex(name.substring(0, name.length() - SUFFIX.length()));
            return Optional.of(store.read(new ObjectRef(first.key(), first.length(), sha), Deadline.after(IO)));
        } catch (ObjectNotFoundException e) {
            return Optional.empty();
        } catch (UnavailableException | ObjectIntegrityException | IllegalArgumentException e) {
            LOG.warn("the answer cache cannot be read ({}); the request is sent", e.getMessage());
            return Optional.empty();
        }
    }

    @Override
    public void put(String key, byte[] answer) {
        try {
            store.create(ObjectKey.of(prefix(key) + Sha256.of(answer).toHex() + SUFFIX), answer, Deadline.after(IO));
        } catch (ObjectConflictException e) {
            // The identical answer is kept already.
        } catch (UnavailableException e) {
            LOG.warn("the answer cache cannot be written ({}); the answer is not kept", e.getMessage());
        }
    }
}
