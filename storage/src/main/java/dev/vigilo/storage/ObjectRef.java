package dev.vigilo.storage;

import java.util.Objects;

/**
 * A reference to one immutable object: its key, its exact length in bytes and the SHA-256 of its bytes.
 * Every durable pointer between Vigilo files is an {@code ObjectRef}; reading through one verifies both length
 * and digest.
 *
 * @param key    where the object lives in its store
 * @param length exact byte length, {@code >= 0}
 * @param sha256 digest of the object's bytes
 */
public record ObjectRef(ObjectKey key, long length, Sha256 sha256) {
    public ObjectRef {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(sha256, "sha256");
        if (length < 0) {
            throw new IllegalArgumentException("object length must be >= 0, got " + length);
        }
    }

    /** The reference describing {@code bytes} stored at {@code key}. */
    public static ObjectRef of(ObjectKey key, byte[] bytes) {
        return new ObjectRef(key, bytes.length, Sha256.of(bytes));
    }
}
