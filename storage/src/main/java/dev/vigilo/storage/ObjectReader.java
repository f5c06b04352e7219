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

    /**
     * Reads {@code slice.length()} bytes at {@code offset} of the object at {@code slice.key()} (a ranged read: the
     * rest of the object is not read) and verifies them against the slice's length and SHA-256. Used for the
     * transcripts a transcript container holds back to back (docs/formats/transcript.md).
     *
     * @return the slice's bytes; the caller owns the array
     * @throws ObjectNotFoundException  when no object exists at the key
     * @throws ObjectIntegrityException when the object ends before the slice does, or the slice's digest differs
     * @throws UnavailableException     on timeout or an unavailable store
     * @throws CancelledException       when the thread was interrupted
     * @throws UnsupportedOperationException when this reader has no ranged reads (test doubles)
     */
    default byte[] readSlice(ObjectRef slice, long offset, Deadline deadline) {
        throw new UnsupportedOperationException(getClass().getName() + " has no ranged reads");
    }

    /**
     * Checks a slice read by {@link #readSlice}: its length and SHA-256 against the reference's.
     *
     * @return {@code bytes}
     * @throws ObjectIntegrityException when they differ
     */
    static byte[] verifiedSlice(ObjectRef slice, long offset, byte[] bytes) {
        if (bytes.length != slice.length()) {
            throw new ObjectIntegrityException(
                    slice.key(),
                    "the object ends " + bytes.length + " bytes into the slice at offset " + offset + ", expected "
                            + slice.length());
        }
        Sha256 actual = Sha256.of(bytes);
        if (!actual.equals(slice.sha256())) {
            throw new ObjectIntegrityException(
                    slice.key(),
                    "SHA-256 of the " + slice.length() + " bytes at offset " + offset + " is " + actual + ", expected "
                            + slice.sha256());
        }
        return bytes;
    }
}
