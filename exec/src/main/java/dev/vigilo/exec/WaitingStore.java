package dev.vigilo.exec;

import dev.vigilo.storage.Deadline;
import dev.vigilo.storage.ObjectInfo;
import dev.vigilo.storage.ObjectKey;
import dev.vigilo.storage.ObjectRef;
import dev.vigilo.storage.ObjectStore;
import dev.vigilo.storage.StoreBinding;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * An {@link ObjectStore} that waits out outages of the store it wraps ({@link OutageWaits}), like
 * {@link WaitingReader}: a create that fails because the store is unreachable, full or read-only is tried again (a
 * create of the same bytes is idempotent, so a try whose outcome was lost succeeds against its own object). Conflicts,
 * missing or damaged objects and cancellation end the call as the store reports them. {@link #close()} leaves the
 * wrapped store open: its owner closes it. Thread-safe.
 */
public final class WaitingStore implements ObjectStore {
    private final ObjectStore store;
    private final OutageWaits waits;

    public WaitingStore(ObjectStore store, OutageWaits waits) {
        this.store = Objects.requireNonNull(store, "store");
        this.waits = Objects.requireNonNull(waits, "waits");
    }

    @Override
    public StoreBinding binding() {
        return store.binding();
    }

    @Override
    public ObjectRef create(ObjectKey key, byte[] bytes, Deadline deadline) {
        return WaitingReader.await(waits, binding(), deadline, d -> store.create(key, bytes, d));
    }

    @Override
    public byte[] readSlice(ObjectRef slice, long offset, Deadline deadline) {
        return WaitingReader.await(waits, binding(), deadline, d -> store.readSlice(slice, offset, d));
    }

    @Override
    public byte[] read(ObjectRef ref, Deadline deadline) {
        return WaitingReader.await(waits, binding(), deadline, d -> store.read(ref, d));
    }

    @Override
    public Optional<ObjectInfo> head(ObjectKey key, Deadline deadline) {
        return WaitingReader.await(waits, binding(), deadline, d -> store.head(key, d));
    }

    @Override
    public List<ObjectInfo> list(String prefix, Deadline deadline) {
        return WaitingReader.await(waits, binding(), deadline, d -> store.list(prefix, d));
    }

    /** Leaves the wrapped store open (its owner closes it). */
    @Override
    public void close() {}
}
