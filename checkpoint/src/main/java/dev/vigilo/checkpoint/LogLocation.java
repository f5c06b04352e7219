package dev.vigilo.checkpoint;

import dev.vigilo.common.input.Names;
import java.nio.file.Path;
import java.util.Objects;

/**
 * Where one experiment's log lives: {@code <root>/datagen_checkpoints/<pipeline>/<experiment>/log.lance}. The
 * durable root is a local directory or a key prefix of a configured S3 store (see {@link LogRoot#resolve}).
 * Pipeline and experiment names are path segments: 1-128 characters of {@code [A-Za-z0-9._-]}, not starting with a
 * dot.
 */
public record LogLocation(LogRoot root, String pipeline, String experiment) {
    public LogLocation {
        Objects.requireNonNull(root, "root");
        checkName("pipeline", pipeline);
        checkName("experiment", experiment);
    }

    /** A local durable root. */
    public LogLocation(Path durableRoot, String pipeline, String experiment) {
        this(LogRoot.local(durableRoot), pipeline, experiment);
    }

    private static void checkName(String what, String name) {
        Objects.requireNonNull(name, what);
        Names.segment(name, what + " name");
    }

    /** Whether the root is a local directory. */
    public boolean isLocal() {
        return root.isLocal();
    }

    /** The experiment's path below the root. */
    private String experimentPath() {
        return "datagen_checkpoints/" + pipeline + "/" + experiment;
    }

    /**
     * The experiment's location (holds log.lance, and the maintenance election lock or lease).
     */
    public String experimentUri() {
        return root.uri() + "/" + experimentPath();
    }

    /** The Lance dataset URI. */
    public String uri() {
        return experimentUri() + "/log.lance";
    }

    /** The S3 key of the experiment's folder inside the bucket (no trailing {@code /}); only for an S3 root. */
    String experimentKey() {
        return LogRoot.join(root.bucketPrefix(), experimentPath());
    }

    /** The experiment directory of a local root. */
    public Path experimentDir() {
        if (!isLocal()) {
            throw new UnsupportedOperationException("not a local durable root: " + root);
        }
        return root.directory().resolve(experimentPath());
    }

    /** The dataset directory of a local root. */
    public Path logDir() {
        return experimentDir().resolve("log.lance");
    }
}
