package dev.vigilo.storage;

import java.util.Objects;
import java.util.Optional;

/**
 * What a store reports about an existing object without reading it.
 *
 * @param key    the object's key
 * @param length its length in bytes
 * @param sha256 its SHA-256 when the store knows it without reading the bytes (S3 stores it with checksummed
 *               uploads; the local store does not keep one), otherwise empty
 */
public record ObjectInfo(ObjectKey key, long length, Optional<Sha256> sha256) {
    public ObjectInfo {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(sha256, "sha256");
        if (length < 0) {
            throw new IllegalArgumentException("object length must be >= 0, got " + length);
        }
    }
}
