package dev.vigilo.bench;

import dev.vigilo.storage.S3ProxyFixture;
import dev.vigilo.storage.StorageConfig;
import dev.vigilo.storage.StoreSpec;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * Where a benchmark keeps its object stores, each by a name: a local directory {@code <work>/objects-<name>}, or
 * the key prefix {@code <name>} of a bucket served by s3proxy in this JVM, whose objects live in files under
 * {@code <work>/s3} (an in-memory service would not hold a million cases in a small heap). Vigilo and the raw
 * baselines reach either through the same store specs, so the S3 figures include request signing, HTTP and
 * s3proxy's own work, all on the benchmark's cores.
 */
final class BenchStores implements AutoCloseable {
    private static final List<String> KINDS = List.of("local", "s3");

    private final Path work;
    private final Optional<S3ProxyFixture> s3;

    private BenchStores(Path work, Optional<S3ProxyFixture> s3) {
        this.work = work;
        this.s3 = s3;
    }

    /** Stores of {@code kind} ({@code local} or {@code s3}) under {@code work}; starts s3proxy for {@code s3}. */
    static BenchStores of(String kind, Path work) {
        return switch (kind) {
            case "local" -> new BenchStores(work, Optional.empty());
            case "s3" -> new BenchStores(work, Optional.of(S3ProxyFixture.startOnDisk(work.resolve("s3"))));
            default -> throw new IllegalArgumentException("store kind must be local or s3, got \"" + kind + "\"");
        };
    }

    /** The store kind a benchmark's last argument names, {@code local} or {@code s3}; {@code local} if none. */
    static String kindArgument(String[] args) {
        return args.length > 0 && KINDS.contains(args[args.length - 1]) ? args[args.length - 1] : "local";
    }

    /** A benchmark's arguments without the store kind. */
    static String[] withoutKind(String[] args) {
        return args.length > 0 && KINDS.contains(args[args.length - 1]) ? Arrays.copyOf(args, args.length - 1) : args;
    }

    boolean isS3() {
        return s3.isPresent();
    }

    /** What the stores are, for the benchmark's first lines. */
    String describe() {
        return s3.map(f -> "S3 (s3proxy in this JVM at " + f.endpoint() + ", objects on disk under "
                        + work.resolve("s3") + ")")
                .orElse("local directories under " + work);
    }

    /** The root of the local store {@code name}; only for local stores. */
    Path localRoot(String name) {
        if (isS3()) {
            throw new IllegalStateException("store " + name + " is not local");
        }
        return work.resolve("objects-" + name);
    }

    /** A configuration whose one, default store is {@code name}: what a user's {@code storage.toml} would say. */
    StorageConfig config(String name) throws IOException {
        if (s3.isEmpty()) {
            return StorageConfig.localDefault(localRoot(name));
        }
        Path file = work.resolve("storage-" + name + ".toml");
        Files.writeString(file, S3ProxyFixture.storageToml("s3", s3.get().endpoint(), name));
        return StorageConfig.load(file);
    }

    /** The spec of the store {@code name}. */
    StoreSpec spec(String name) throws IOException {
        return config(name).defaultStore();
    }

    /** Deletes every object of the store {@code name} whose key starts with {@code keyPrefix} (may be empty). */
    void delete(String name, String keyPrefix) throws IOException {
        if (s3.isPresent()) {
            s3.get().deleteAll(name + "/" + keyPrefix);
            return;
        }
        Path root = localRoot(name);
        if (keyPrefix.isEmpty()) {
            deleteTree(root);
        } else if (keyPrefix.endsWith("/")) {
            deleteTree(root.resolve(keyPrefix));
        } else {
            throw new IllegalArgumentException("a local key prefix must name a directory: " + keyPrefix);
        }
    }

    @Override
    public void close() {
        s3.ifPresent(S3ProxyFixture::close);
    }

    static void deleteTree(Path root) throws IOException {
        if (!Files.exists(root)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(root)) {
            for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }
}
