package dev.vigilo.checkpoint;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.vigilo.common.errors.DamagedException;
import dev.vigilo.common.errors.FencedException;
import dev.vigilo.common.errors.VigiloException;
import dev.vigilo.common.json.StrictJson;
import dev.vigilo.storage.S3Clients;
import dev.vigilo.storage.StoreSpec;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.Optional;
import software.amazon.awssdk.services.s3.S3Client;

/**
 * Election on an S3 root: a lease object {@code <experiment>/maintenance.lease} holding {@code
 * {"holder", "expires_at_ms"}}. Acquire = create-only PUT ({@code If-None-Match: *}); renew =
 * overwrite conditional on the ETag we wrote ({@code If-Match}); takeover = conditional overwrite
 * of an expired lease, conditional on the ETag read, so two contenders cannot both win. A holder
 * that dies stops renewing and the role passes on after the expiry; a holder whose lease was taken
 * over fails its next {@link #confirm()}. Expiry is compared with the contender's clock (the wall
 * clock; tests pass a {@link Clock} of their own to move time): clocks must agree to well within
 * the lease duration.
 */
final class S3Lease implements Election {
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(S3Lease.class);
    /** Lease records are read strictly: a key given twice, or content after the record, is damage. */
    private static final ObjectMapper JSON = StrictJson.newMapper();

    /**
     * Default lease duration; each maintenance step renews it, so it must exceed the longest single
     * step.
     */
    static final Duration DEFAULT_TTL = Duration.ofMinutes(10);

    /** A stored lease and the ETag of the object holding it. */
    record Stored(String holder, long expiresAtMs, String etag) {}

    private final S3Client client;
    private final S3Conditional objects;
    private final String bucket;
    private final String key;
    private final String holder;
    private final Duration ttl;
    private final Clock clock;
    private String etag;

    private S3Lease(
            S3Client client, StoreSpec.S3 store, String key, String holder, Duration ttl, Clock clock, String etag) {
        this.client = client;
        this.clock = clock;
        this.objects = new S3Conditional(client, store, "lease");
        this.bucket = store.bucket();
        this.key = key;
        this.holder = holder;
        this.ttl = ttl;
        this.etag = etag;
    }

    /** Tries to acquire the lease of {@code loc}'s experiment with a client of its own, closed with the lease. */
    static Optional<Election> tryAcquire(LogLocation loc, String holder, Duration ttl) {
        return tryAcquire(loc, holder, ttl, Clock.systemUTC());
    }

    /** {@link #tryAcquire(LogLocation, String, Duration)} on {@code clock}. */
    static Optional<Election> tryAcquire(LogLocation loc, String holder, Duration ttl, Clock clock) {
        return tryAcquire(loc, "maintenance.lease", holder, ttl, clock);
    }

    /** Tries to acquire the lease object {@code <experiment>/<name>} with a client of its own, closed with it. */
    static Optional<Election> tryAcquire(LogLocation loc, String name, String holder, Duration ttl) {
        return tryAcquire(loc, name, holder, ttl, Clock.systemUTC());
    }

    /** {@link #tryAcquire(LogLocation, String, String, Duration)} on {@code clock}. */
    static Optional<Election> tryAcquire(LogLocation loc, String name, String holder, Duration ttl, Clock clock) {
        StoreSpec.S3 store = loc.root().s3Store();
        S3Client client = S3Clients.open(store);
        try {
            Optional<Election> e = tryAcquire(client, store, loc.experimentKey() + "/" + name, holder, ttl, clock);
            if (e.isEmpty()) {
                client.close();
            }
            return e;
        } catch (RuntimeException e) {
            client.close();
            throw e;
        }
    }

    static Optional<Election> tryAcquire(S3Client client, StoreSpec.S3 store, String key, String holder, Duration ttl) {
        return tryAcquire(client, store, key, holder, ttl, Clock.systemUTC());
    }

    /**
     * Tries to acquire the lease object {@code key}, judging expiry and computing the new one with {@code clock};
     * the lease keeps {@code clock} for its renewals.
     */
    static Optional<Election> tryAcquire(
            S3Client client, StoreSpec.S3 store, String key, String holder, Duration ttl, Clock clock) {
        S3Lease lease = new S3Lease(client, store, key, holder, ttl, clock, null);
        Optional<Stored> cur = lease.read();
        long now = clock.millis();
        if (cur.isPresent() && cur.get().expiresAtMs() > now) {
            return Optional.empty();
        }
        // Absent: create-only. Expired: overwrite exactly the version we judged expired (a
        // concurrent renewal or
        // takeover changes the ETag and makes this PUT fail with 412).
        Optional<String> won = lease.put(cur.isEmpty() ? null : cur.get().etag(), now + ttl.toMillis());
        if (won.isEmpty()) {
            return Optional.empty();
        }
        lease.etag = won.get();
        if (cur.isPresent()) {
            LOG.info(
                    "took over expired lease s3://{}/{} from {}",
                    store.bucket(),
                    key,
                    cur.get().holder());
        }
        return Optional.of(lease);
    }

    /** Whether the lease object {@code <experiment>/<name>} exists and has not expired by {@code clock}. */
    static boolean isHeld(LogLocation loc, String name, Clock clock) {
        StoreSpec.S3 store = loc.root().s3Store();
        try (S3Client client = S3Clients.open(store)) {
            S3Lease probe =
                    new S3Lease(client, store, loc.experimentKey() + "/" + name, "probe", DEFAULT_TTL, clock, null);
            return probe.read().map(s -> s.expiresAtMs() > probe.clock.millis()).orElse(false);
        }
    }

    Optional<Stored> read() {
        Optional<S3Conditional.Stored> r = objects.get(key);
        if (r.isEmpty()) {
            return Optional.empty();
        }
        try {
            JsonNode n = JSON.readTree(r.get().bytes());
            return Optional.of(new Stored(
                    n.path("holder").asText(),
                    n.path("expires_at_ms").asLong(),
                    r.get().etag()));
        } catch (java.io.IOException e) {
            // S3 PUTs are atomic, so this is a foreign object at our key: refuse rather than guess.
            throw new DamagedException(objects.uri(key) + " is not a lease record: " + e.getMessage());
        }
    }

    /**
     * Conditional PUT (If-Match {@code ifMatch}, or If-None-Match * when null); the new ETag, empty
     * on 412/409.
     */
    private Optional<String> put(String ifMatch, long expiresAtMs) {
        byte[] body = JSON.createObjectNode()
                .put("holder", holder)
                .put("expires_at_ms", expiresAtMs)
                .toString()
                .getBytes(StandardCharsets.UTF_8);
        return objects.put(key, ifMatch, body);
    }

    /** The holder id written into the lease. */
    String holder() {
        return holder;
    }

    @Override
    public void confirm() {
        Optional<String> renewed = put(etag, clock.millis() + ttl.toMillis());
        if (renewed.isEmpty()) {
            throw new FencedException("lease s3://"
                    + bucket
                    + "/"
                    + key
                    + " of "
                    + holder
                    + " was taken over (it expired without renewal)");
        }
        etag = renewed.get();
    }

    @Override
    public void release() {
        try {
            // Expire it rather than delete it: the overwrite is conditional on our ETag, a delete
            // would not be everywhere.
            put(etag, 0);
        } catch (VigiloException e) {
            LOG.warn("releasing lease {} failed (it expires by itself): {}", objects.uri(key), e.getMessage());
        } finally {
            client.close();
        }
    }
}
