package dev.vigilo.agent.sandbox;

import com.fasterxml.jackson.databind.JsonNode;
import dev.vigilo.common.errors.InvalidInputException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * A run's {@code sandbox} (docs/formats/plan-profile.md, "sandbox"), as the frozen profile holds it.
 *
 * @param kind      where the commands of a case run
 * @param network   whether they may use the network (bwrap: the host's; podman: the default network)
 * @param workdir   the directory copied into every attempt's fresh work directory (absolute); empty for an empty one
 * @param memoryMb  the most memory of the attempt's processes together, in MiB
 * @param pids      the most processes (and threads) of the attempt at once
 * @param keepFiles globs over paths relative to the work directory; matching regular files are kept after the
 *                  attempt, at most {@link #MAX_KEPT_FILES} files and {@link #MAX_KEPT_BYTES} together
 * @param image     the container image ({@code podman} only)
 */
public record SandboxSettings(
        SandboxKind kind,
        boolean network,
        Optional<Path> workdir,
        Optional<Long> memoryMb,
        Optional<Integer> pids,
        List<String> keepFiles,
        Optional<String> image) {
    /** The most bytes of kept files of one attempt together. */
    public static final long MAX_KEPT_BYTES = 16L << 20;
    /** The most kept files of one attempt. */
    public static final int MAX_KEPT_FILES = 100;
    /** No sandbox: what a profile without {@code sandbox} means. */
    public static final SandboxSettings NONE = new SandboxSettings(
            SandboxKind.NONE, false, Optional.empty(), Optional.empty(), Optional.empty(), List.of(), Optional.empty());

    public SandboxSettings {
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(workdir, "workdir");
        Objects.requireNonNull(memoryMb, "memoryMb");
        Objects.requireNonNull(pids, "pids");
        keepFiles = List.copyOf(keepFiles);
        Objects.requireNonNull(image, "image");
        if (kind == SandboxKind.PODMAN && image.isEmpty()) {
            throw new IllegalArgumentException("a podman sandbox needs an image");
        }
        workdir = workdir.map(Path::toAbsolutePath);
    }

    /** Whether commands run in a sandbox at all. */
    public boolean sandboxed() {
        return kind != SandboxKind.NONE;
    }

    /**
     * The settings a frozen profile's {@code sandbox} object describes (validated when the run was created); a
     * relative {@code workdir} is resolved against {@code base}, the directory relative command paths are resolved
     * against too (the worker's working directory).
     *
     * @param node the profile's {@code sandbox}, or null or missing for none
     * @throws InvalidInputException when the object is not what the profile reader writes
     */
    public static SandboxSettings fromConfig(JsonNode node, Path base) {
        if (node == null || node.isMissingNode() || node.isNull()) {
            return NONE;
        }
        SandboxKind kind = SandboxKind.fromWire(node.path("kind").asText("none"))
                .orElseThrow(() -> new InvalidInputException("sandbox.kind: unknown kind \""
                        + node.path("kind").asText() + "\" (known: none, bwrap," + " podman)"));
        List<String> keep = new ArrayList<>();
        node.path("keep_files").forEach(g -> keep.add(g.asText()));
        Optional<String> image = text(node, "image");
        if (kind == SandboxKind.PODMAN && image.isEmpty()) {
            throw new InvalidInputException("sandbox.image: is required for kind podman");
        }
        return new SandboxSettings(
                kind,
                node.path("network").asBoolean(false),
                text(node, "workdir").map(base::resolve),
                node.has("memory_mb") ? Optional.of(node.get("memory_mb").asLong()) : Optional.empty(),
                node.has("pids") ? Optional.of(node.get("pids").asInt()) : Optional.empty(),
                keep,
                image);
    }

    private static Optional<String> text(JsonNode node, String key) {
        JsonNode v = node.get(key);
        return v == null || !v.isTextual() ? Optional.empty() : Optional.of(v.asText());
    }
}
