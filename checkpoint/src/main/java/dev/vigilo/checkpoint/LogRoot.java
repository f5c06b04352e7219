package dev.vigilo.checkpoint;

import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.common.errors.Secrets;
import dev.vigilo.storage.StorageConfig;
import dev.vigilo.storage.StoreSpec;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.function.Supplier;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * The durable root under which checkpoint logs live: a directory of the local filesystem, or a key prefix inside a
 * configured S3 store. An S3 root carries its store's {@link StoreSpec}, so everything that reaches the log (Lance,
 * and the files and leases Vigilo manages beside it) uses the endpoint, region and addressing style of the one
 * storage configuration.
 *
 * @param store  the store: {@link StoreSpec.Local} whose root is the directory itself, or {@link StoreSpec.S3}
 * @param prefix for S3, the key prefix below the store's own prefix ({@code ""} for the store's root), without
 *     leading or trailing {@code /}; always {@code ""} for a local root
 */
public record LogRoot(StoreSpec store, String prefix) {
    /** Relative key prefixes: segments of letters, digits and {@code . _ -}, no empty, {@code .} or {@code ..}. */
    private static final Pattern SEGMENT = Pattern.compile("[A-Za-z0-9_-][A-Za-z0-9._-]*");

    private static final String STORE_SCHEME = "store:";
    private static final String S3_SCHEME = "s3://";

    public LogRoot {
        Objects.requireNonNull(store, "store");
        Objects.requireNonNull(prefix, "prefix");
        if (store instanceof StoreSpec.Local && !prefix.isEmpty()) {
            throw new IllegalArgumentException("a local root has no key prefix; resolve it into the directory");
        }
        if (!prefix.isEmpty() && !validPrefix(prefix)) {
            throw new IllegalArgumentException("invalid key prefix \"" + prefix + "\"");
        }
    }

    /** A local directory (made absolute and normalized). */
    public static LogRoot local(Path directory) {
        Objects.requireNonNull(directory, "directory");
        return new LogRoot(new StoreSpec.Local("durable-root", directory), "");
    }

    /**
     * Resolves a durable root as a user writes it:
     *
     * <ul>
     *   <li>{@code store:NAME} or {@code store:NAME/sub/prefix}: the store named {@code NAME} in {@code config}
     *       (a local store's directory, or an S3 store's bucket and prefix), optionally below a sub-prefix;
     *   <li>{@code s3://bucket[/prefix]}: the configured S3 store whose bucket is {@code bucket} and whose prefix
     *       is the longest one that starts the URL's path; the rest of the path is the sub-prefix;
     *   <li>anything else: a local directory.
     * </ul>
     *
     * The configuration is read only for the first two forms.
     *
     * @throws InvalidInputException naming the configured stores when no store matches, or when two stores with
     *     different endpoints match an {@code s3://} URL equally well
     */
    public static LogRoot resolve(String text, Supplier<StorageConfig> config) {
        Objects.requireNonNull(text, "text");
        Objects.requireNonNull(config, "config");
        if (text.startsWith(STORE_SCHEME)) {
            return named(text, config.get());
        }
        if (text.startsWith(S3_SCHEME)) {
            return s3(text, config.get());
        }
        if (text.contains("://")) {
            throw new InvalidInputException("durable root \"" + Secrets.mask(text) + "\" is neither a local directory,"
                    + " s3://bucket/prefix nor store:NAME[/prefix]; check --durable-root");
        }
        try {
            return local(Path.of(text));
        } catch (InvalidPathException e) {
            throw new InvalidInputException(
                    "durable root \"" + Secrets.mask(text) + "\" is not a valid path: " + e.getMessage());
        }
    }

    /** Whether this is a local directory. */
    public boolean isLocal() {
        return store instanceof StoreSpec.Local;
    }

    /** The local directory; only for a local root. */
    public Path directory() {
        if (store instanceof StoreSpec.Local local) {
            return local.root();
        }
        throw new UnsupportedOperationException("not a local durable root: " + this);
    }

    /** The S3 store; only for an S3 root. */
    public StoreSpec.S3 s3Store() {
        if (store instanceof StoreSpec.S3 s3) {
            return s3;
        }
        throw new UnsupportedOperationException("not an S3 durable root: " + this);
    }

    /** The S3 key prefix of this root inside its bucket (store prefix and sub-prefix); only for an S3 root. */
    public String bucketPrefix() {
        return join(s3Store().prefix(), prefix);
    }

    /** The root as a URI Lance understands: the absolute directory, or {@code s3://bucket[/prefix]}. */
    public String uri() {
        if (isLocal()) {
            return directory().toString();
        }
        String key = bucketPrefix();
        return S3_SCHEME + s3Store().bucket() + (key.isEmpty() ? "" : "/" + key);
    }

    @Override
    public String toString() {
        return isLocal() ? uri() : uri() + " (store \"" + store.name() + "\", " + store.binding() + ")";
    }

    private static LogRoot named(String text, StorageConfig config) {
        String rest = text.substring(STORE_SCHEME.length());
        int slash = rest.indexOf('/');
        String name = slash < 0 ? rest : rest.substring(0, slash);
        String sub = slash < 0 ? "" : rest.substring(slash + 1).replaceAll("/+$", "");
        StoreSpec spec = config.store(name)
                .orElseThrow(
                        () -> new InvalidInputException("durable root \"" + Secrets.mask(text) + "\": storage config "
                                + config.source() + " has no store named \"" + name + "\" (configured: "
                                + describe(config.stores()) + ")"));
        if (!sub.isEmpty() && !validPrefix(sub)) {
            throw new InvalidInputException("durable root \"" + Secrets.mask(text) + "\": \"" + sub
                    + "\" is not a key prefix" + " (segments of letters, digits, '.', '_' and '-', separated by '/')");
        }
        if (spec instanceof StoreSpec.Local local) {
            return local(sub.isEmpty() ? local.root() : local.root().resolve(sub));
        }
        return new LogRoot(spec, sub);
    }

    private static LogRoot s3(String text, StorageConfig config) {
        URI uri;
        try {
            uri = new URI(text);
        } catch (URISyntaxException e) {
            throw new InvalidInputException(
                    "durable root \"" + Secrets.mask(text) + "\" is not a valid s3://bucket/prefix URL");
        }
        String bucket = uri.getHost();
        if (bucket == null || bucket.isEmpty()) {
            throw new InvalidInputException(
                    "durable root \"" + Secrets.mask(text) + "\" names no bucket (s3://bucket/prefix)");
        }
        String path = uri.getPath() == null ? "" : uri.getPath().replaceAll("^/+|/+$", "");
        List<StoreSpec.S3> candidates = config.stores().stream()
                .filter(StoreSpec.S3.class::isInstance)
                .map(StoreSpec.S3.class::cast)
                .filter(s -> s.bucket().equals(bucket) && startsWithPrefix(path, s.prefix()))
                .collect(Collectors.toList());
        if (candidates.isEmpty()) {
            throw new InvalidInputException(
                    "durable root \"" + Secrets.mask(text) + "\": no S3 store in storage config "
                            + config.source() + " holds it (configured: " + describe(config.stores())
                            + "); add a [stores.NAME] with kind = \"s3\" and bucket = \"" + bucket
                            + "\", or pass --storage-config with one");
        }
        int longest =
                candidates.stream().mapToInt(s -> s.prefix().length()).max().getAsInt();
        List<StoreSpec.S3> best = candidates.stream()
                .filter(s -> s.prefix().length() == longest)
                .sorted(Comparator.comparing(StoreSpec::name))
                .collect(Collectors.toList());
        if (best.stream().map(StoreSpec::binding).distinct().count() > 1) {
            throw new InvalidInputException(
                    "durable root \"" + Secrets.mask(text) + "\" matches several stores of storage config "
                            + config.source() + " (" + describe(List.copyOf(best)) + "); name one with store:NAME");
        }
        StoreSpec.S3 store = best.get(0);
        String sub =
                store.prefix().isEmpty() ? path : path.substring(store.prefix().length());
        sub = sub.replaceAll("^/+", "");
        if (!sub.isEmpty() && !validPrefix(sub)) {
            throw new InvalidInputException("durable root \"" + Secrets.mask(text) + "\": \"" + sub
                    + "\" is not a key prefix" + " (segments of letters, digits, '.', '_' and '-', separated by '/')");
        }
        return new LogRoot(store, sub);
    }

    private static boolean startsWithPrefix(String path, String prefix) {
        return prefix.isEmpty() || path.equals(prefix) || path.startsWith(prefix + "/");
    }

    private static boolean validPrefix(String prefix) {
        for (String segment : prefix.split("/", -1)) {
            if (!SEGMENT.matcher(segment).matches()) {
                return false;
            }
        }
        return true;
    }

    private static String describe(List<StoreSpec> stores) {
        return stores.stream().map(s -> s.name() + " = " + s.binding()).collect(Collectors.joining(", "));
    }

    static String join(String a, String b) {
        if (a.isEmpty()) {
            return b;
        }
        return b.isEmpty() ? a : a + "/" + b;
    }
}
