package dev.vigilo.checkpoint;

import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.common.errors.Secrets;
import dev.vigilo.common.input.Names;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * Where one experiment's log lives: {@code
 * <root>/datagen_checkpoints/<pipeline>/<experiment>/log.lance}. The durable root is a local
 * directory (absolute path) or {@code s3://bucket[/prefix]} (Lance's own object store; {@code
 * storageOptions} are Lance/object_store options such as {@code aws_endpoint}, {@code aws_region},
 * {@code aws_access_key_id}, {@code aws_secret_access_key}, {@code allow_http}). Pipeline and
 * experiment names are path segments: 1-128 characters of {@code [A-Za-z0-9._-]}, not starting with
 * a dot.
 */
public record LogLocation(String root, String pipeline, String experiment, Map<String, String> storageOptions) {
    public LogLocation {
        Objects.requireNonNull(root, "root");
        checkName("pipeline", pipeline);
        checkName("experiment", experiment);
        storageOptions = Map.copyOf(storageOptions);
        if (root.startsWith("s3://")) {
            root = root.replaceAll("/+$", "");
            if (root.length() <= "s3://".length())
                throw new InvalidInputException("durable root '" + root + "' names no bucket; use s3://bucket/prefix");
        } else if (root.contains("://")) {
            throw new InvalidInputException("durable root '" + Secrets.mask(root)
                    + "' is neither a local directory nor s3://bucket/prefix; check --durable-root");
        } else {
            root = Path.of(root).toAbsolutePath().normalize().toString();
        }
    }

    /** A local durable root. */
    public LogLocation(Path durableRoot, String pipeline, String experiment) {
        this(durableRoot.toString(), pipeline, experiment, Map.of());
    }

    /**
     * A durable root as given on the command line: a local path, or {@code s3://...} with storage
     * options taken from the environment ({@code AWS_ENDPOINT_URL} or {@code AWS_ENDPOINT}, {@code
     * AWS_REGION}, {@code AWS_ACCESS_KEY_ID}, {@code AWS_SECRET_ACCESS_KEY}, {@code
     * AWS_ALLOW_HTTP}). Lance's MemWAL writer reads those variables itself.
     */
    public static LogLocation of(String root, String pipeline, String experiment, Map<String, String> env) {
        Map<String, String> so = new LinkedHashMap<>();
        if (root.startsWith("s3://")) {
            String ep = env.getOrDefault("AWS_ENDPOINT_URL", env.get("AWS_ENDPOINT"));
            if (ep != null) {
                so.put("aws_endpoint", ep);
                so.put("aws_virtual_hosted_style_request", "false");
            }
            put(so, "aws_region", env.getOrDefault("AWS_REGION", env.get("AWS_DEFAULT_REGION")));
            put(so, "aws_access_key_id", env.get("AWS_ACCESS_KEY_ID"));
            put(so, "aws_secret_access_key", env.get("AWS_SECRET_ACCESS_KEY"));
            put(so, "allow_http", env.get("AWS_ALLOW_HTTP"));
        }
        return new LogLocation(root, pipeline, experiment, so);
    }

    private static void put(Map<String, String> m, String k, String v) {
        if (v != null && !v.isEmpty()) m.put(k, v);
    }

    private static void checkName(String what, String name) {
        Objects.requireNonNull(name, what);
        Names.segment(name, what + " name");
    }

    /** Whether the root is a local directory. */
    public boolean isLocal() {
        return !root.startsWith("s3://");
    }

    /**
     * The experiment's location (holds log.lance, and the maintenance election lock for local
     * roots).
     */
    public String experimentUri() {
        return root + "/datagen_checkpoints/" + pipeline + "/" + experiment;
    }

    /** The Lance dataset URI. */
    public String uri() {
        return experimentUri() + "/log.lance";
    }

    /** The experiment directory of a local root. */
    public Path experimentDir() {
        if (!isLocal()) throw new UnsupportedOperationException("not a local durable root: " + root);
        return Path.of(experimentUri());
    }

    /** The dataset directory of a local root. */
    public Path logDir() {
        return experimentDir().resolve("log.lance");
    }
}
