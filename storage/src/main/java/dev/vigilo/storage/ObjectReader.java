package dev.vigilo.storage;

import dev.vigilo.common.errors.CancelledException;
import dev.vigilo.common.errors.UnavailableException;

/**
 * Verified reads of immutable objects from one physical store: the part of {@link ObjectStore} a reader of
 * published files needs. Implementations: every {@link ObjectStore}, and {@link CachingObjectReader}, which keeps
 * recently read small objects in memory.
 *
 * <p>Every call takes a {@link Deadline} and honours thread interruption: it throws
 * {@link UnavailableException} or {@link CancelledException} instead of blocking past either.
 * Implementations are thread-safe.
 */
public interface ObjectReader {

    /**
     * The physical identity of the store the bytes come from: where they live, independent of the name a
     * configuration gives it, for example {@code local:/var/lib/vigilo/objects} or
     * {@code s3:http://host:9000/bucket/prefix}. Two readers with the same binding read the same objects.
     */
    StoreBinding binding();

    /**
     * Reads the object {@code ref} names and verifies it.
     *
     * @return the object's bytes, whose length and SHA-256 equal {@code ref}'s; the caller owns the array
     * @throws ObjectNotFoundException  when no object exists at the key
     * @throws ObjectIntegrityException when the length or digest differ
     * @throws UnavailableException     on timeout or an unavailable store
     * @throws CancelledException       when the thread was interrupted
     */
    byte[] read(ObjectRef ref, Deadline deadline);
}
