package dev.vigilo.storage;

import java.util.Objects;

/**
 * Opens the {@link ObjectStore} a {@link StoreSpec} describes. The only public way to get a store, so callers
 * depend on the interface and configuration alone.
 */
public final class ObjectStores {
    private ObjectStores() {}

    /**
     * Opens the store {@code spec} describes. Opening contacts no service and writes nothing: a local root is
     * created on first write, and an S3 store resolves credentials (from the AWS SDK's default provider chain)
     * and reaches the service on its first call. The caller closes the store.
     */
    public static ObjectStore open(StoreSpec spec) {
        Objects.requireNonNull(spec, "spec");
        if (spec instanceof StoreSpec.Local local) {
            return new LocalObjectStore(local);
        }
        if (spec instanceof StoreSpec.S3 s3) {
            return new S3ObjectStore(s3);
        }
        throw new IllegalArgumentException("unknown store spec " + spec);
    }
}
