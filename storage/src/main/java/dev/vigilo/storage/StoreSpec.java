package dev.vigilo.storage;

import java.net.URI;
import java.nio.file.Path;
import java.util.Objects;
import java.util.Optional;

/**
 * One object-store binding from a storage configuration: enough to open the store, never credentials
 * (S3 credentials come from the AWS SDK's default provider chain at open time).
 */
public sealed interface StoreSpec permits StoreSpec.Local, StoreSpec.S3 {

    /** The name the configuration gives this store, e.g. {@code default} or {@code shared}. */
    String name();

    /** The physical identity this spec resolves to; see {@link StoreBinding}. */
    StoreBinding binding();

    /**
     * A directory on the local filesystem.
     *
     * @param name the configured name
     * @param root the directory, absolute and normalized; created on first write
     */
    record Local(String name, Path root) implements StoreSpec {
        public Local {
            Objects.requireNonNull(name, "name");
            Objects.requireNonNull(root, "root");
            root = root.toAbsolutePath().normalize();
        }

        @Override
        public StoreBinding binding() {
            return new StoreBinding("local:" + root);
        }
    }

    /**
     * A bucket (and optional key prefix) of an S3-API service.
     *
     * @param name      the configured name
     * @param endpoint  the service endpoint, empty for AWS's regional default
     * @param region    the signing region, e.g. {@code us-east-1}
     * @param bucket    the bucket
     * @param prefix    a key prefix without leading or trailing {@code /}, empty for the bucket root
     * @param pathStyle path-style addressing (needed by most self-hosted services)
     */
    record S3(String name, Optional<URI> endpoint, String region, String bucket, String prefix, boolean pathStyle)
            implements StoreSpec {
        public S3 {
            Objects.requireNonNull(name, "name");
            Objects.requireNonNull(endpoint, "endpoint");
            Objects.requireNonNull(region, "region");
            Objects.requireNonNull(bucket, "bucket");
            Objects.requireNonNull(prefix, "prefix");
            if (prefix.startsWith("/") || prefix.endsWith("/")) {
                throw new IllegalArgumentException("S3 prefix must not start or end with '/': \"" + prefix + "\"");
            }
        }

        @Override
        public StoreBinding binding() {
            String where = endpoint.map(URI::toString).orElse("aws");
            return new StoreBinding("s3:" + where + "/" + bucket + (prefix.isEmpty() ? "" : "/" + prefix));
        }
    }
}
