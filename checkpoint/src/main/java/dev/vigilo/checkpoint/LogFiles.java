package dev.vigilo.checkpoint;

import dev.vigilo.common.errors.UnavailableException;
import dev.vigilo.storage.S3Clients;
import dev.vigilo.storage.StoreSpec;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.CommonPrefix;
import software.amazon.awssdk.services.s3.model.DeleteObjectsResponse;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Request;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Response;
import software.amazon.awssdk.services.s3.model.NoSuchKeyException;
import software.amazon.awssdk.services.s3.model.ObjectIdentifier;
import software.amazon.awssdk.services.s3.model.S3Object;

/**
 * Raw read access to files inside the log dataset that Lance's Java API does not expose (MemWAL
 * shard manifests): the local file system, or S3 through an AWS SDK client from {@link S3Clients}
 * for the root's store (the same endpoint, region and credential chain Lance gets). Paths are
 * relative to the dataset root, '/'-separated.
 */
interface LogFiles extends AutoCloseable {
    /**
     * Names of the direct children (files and folders) of {@code dir}; empty if it does not exist.
     */
    List<String> list(String dir);

    /** Bytes of {@code path}, empty if it does not exist. */
    Optional<byte[]> read(String path);

    /**
     * Deletes the file {@code path}; a missing file is not an error (a crashed earlier pass may
     * have removed it).
     */
    void delete(String path);

    /**
     * Deletes {@code dir} and everything under it, calling {@code afterEach} with each removed
     * file's path. Not atomic: a crash leaves part of the tree, so callers only delete trees nobody
     * reads any more.
     */
    void deleteTree(String dir, java.util.function.Consumer<String> afterEach);

    @Override
    void close();

    static LogFiles open(LogLocation loc) {
        return loc.isLocal() ? new Local(loc.logDir()) : S3.open(loc);
    }

    /** Local directory. */
    final class Local implements LogFiles {
        private final Path root;

        Local(Path root) {
            this.root = root;
        }

        @Override
        public List<String> list(String dir) {
            Path d = root.resolve(dir);
            if (!Files.isDirectory(d)) {
                return List.of();
            }
            try (Stream<Path> s = Files.list(d)) {
                return s.map(p -> p.getFileName().toString()).sorted().toList();
            } catch (IOException e) {
                throw new UnavailableException("cannot list " + d, e);
            }
        }

        @Override
        public Optional<byte[]> read(String path) {
            try {
                return Optional.of(Files.readAllBytes(root.resolve(path)));
            } catch (NoSuchFileException e) {
                return Optional.empty();
            } catch (IOException e) {
                throw new UnavailableException("cannot read " + root.resolve(path), e);
            }
        }

        @Override
        public void delete(String path) {
            try {
                Files.deleteIfExists(root.resolve(path));
            } catch (IOException e) {
                throw new UnavailableException("cannot delete " + root.resolve(path), e);
            }
        }

        @Override
        public void deleteTree(String dir, java.util.function.Consumer<String> afterEach) {
            Path d = root.resolve(dir);
            if (!Files.isDirectory(d)) {
                return;
            }
            List<Path> all;
            try (Stream<Path> s = Files.walk(d)) {
                all = new ArrayList<>(s.toList());
            } catch (NoSuchFileException gone) {
                return;
            } catch (IOException e) {
                throw new UnavailableException("cannot list " + d, e);
            }
            // Deepest first, so every directory is empty when its turn comes.
            all.sort(java.util.Comparator.comparingInt(Path::getNameCount).reversed());
            for (Path p : all) {
                try {
                    boolean file = !Files.isDirectory(p);
                    Files.deleteIfExists(p);
                    if (file) {
                        afterEach.accept(root.relativize(p).toString().replace('\\', '/'));
                    }
                } catch (IOException e) {
                    throw new UnavailableException("cannot delete " + p, e);
                }
            }
        }

        @Override
        public void close() {}
    }

    /** An S3 prefix, reached with a client from {@link S3Clients} for the root's store. */
    final class S3 implements LogFiles {
        private final S3Client client;
        private final StoreSpec.S3 store;
        private final String bucket;
        private final String prefix;

        private S3(S3Client client, StoreSpec.S3 store, String prefix) {
            this.client = client;
            this.store = store;
            this.bucket = store.bucket();
            this.prefix = prefix;
        }

        static S3 open(LogLocation loc) {
            StoreSpec.S3 store = loc.root().s3Store();
            return new S3(S3Clients.open(store), store, loc.experimentKey() + "/log.lance");
        }

        /** The object key of {@code path} below this log's prefix. */
        private String key(String path) {
            return prefix + "/" + path;
        }

        private UnavailableException failure(String verb, String key, String detail, Exception cause) {
            return new UnavailableException("cannot " + verb + " s3://" + bucket + "/" + key + ": " + detail, cause);
        }

        private UnavailableException failure(String verb, String key, SdkException cause) {
            return failure(verb, key, S3Clients.explain(store, cause), cause);
        }

        @Override
        public List<String> list(String dir) {
            String p = key(dir) + "/";
            List<String> out = new ArrayList<>();
            String token = null;
            try {
                do {
                    ListObjectsV2Response r = client.listObjectsV2(ListObjectsV2Request.builder()
                            .bucket(bucket)
                            .prefix(p)
                            .delimiter("/")
                            .continuationToken(token)
                            .build());
                    for (CommonPrefix cp : r.commonPrefixes()) {
                        String s = cp.prefix().substring(p.length());
                        out.add(s.endsWith("/") ? s.substring(0, s.length() - 1) : s);
                    }
                    for (S3Object o : r.contents()) {
                        out.add(o.key().substring(p.length()));
                    }
                    token = r.isTruncated() ? r.nextContinuationToken() : null;
                } while (token != null);
            } catch (SdkException e) {
                throw failure("list", p, e);
            }
            out.sort(null);
            return out;
        }

        @Override
        public Optional<byte[]> read(String path) {
            try {
                return Optional.of(client.getObjectAsBytes(b -> b.bucket(bucket).key(key(path)))
                        .asByteArray());
            } catch (NoSuchKeyException e) {
                return Optional.empty();
            } catch (SdkException e) {
                throw failure("read", key(path), e);
            }
        }

        @Override
        public void delete(String path) {
            try {
                // S3 deletes are idempotent.
                client.deleteObject(b -> b.bucket(bucket).key(key(path)));
            } catch (SdkException e) {
                throw failure("delete", key(path), e);
            }
        }

        @Override
        public void deleteTree(String dir, java.util.function.Consumer<String> afterEach) {
            String p = key(dir) + "/";
            String token = null;
            try {
                do {
                    // Without a delimiter the listing is recursive: every object of the tree, up to
                    // 1000 per page (the
                    // DeleteObjects limit too).
                    ListObjectsV2Response r = client.listObjectsV2(ListObjectsV2Request.builder()
                            .bucket(bucket)
                            .prefix(p)
                            .continuationToken(token)
                            .build());
                    List<ObjectIdentifier> ids = r.contents().stream()
                            .map(o -> ObjectIdentifier.builder().key(o.key()).build())
                            .toList();
                    if (!ids.isEmpty()) {
                        DeleteObjectsResponse d = client.deleteObjects(
                                b -> b.bucket(bucket).delete(x -> x.objects(ids).quiet(true)));
                        if (d.hasErrors() && !d.errors().isEmpty()) {
                            throw failure("delete under", p, d.errors().get(0).message(), null);
                        }
                        for (ObjectIdentifier id : ids) {
                            afterEach.accept(id.key().substring(prefix.length() + 1));
                        }
                    }
                    token = r.isTruncated() ? r.nextContinuationToken() : null;
                } while (token != null);
            } catch (SdkException e) {
                throw failure("delete under", p, e);
            }
        }

        @Override
        public void close() {
            client.close();
        }
    }
}
