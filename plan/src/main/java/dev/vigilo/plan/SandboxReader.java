package dev.vigilo.plan;

import com.fasterxml.jackson.databind.JsonNode;
import dev.vigilo.config.ConfigReader;
import dev.vigilo.config.KeyPath;
import java.nio.file.FileSystems;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.PatternSyntaxException;

/**
 * Reads a profile's optional {@code sandbox} (docs/formats/plan-profile.md, "sandbox"): where the commands of a case
 * run ({@code none}, {@code bwrap}, {@code podman}), whether they may use the network, the directory copied into
 * every attempt's work directory, memory and process limits, the files kept after the attempt and a podman image.
 * Absent, or {@code kind: none} alone, means what every profile meant before it: commands run on the host.
 */
final class SandboxReader {
    private static final KeyPath SANDBOX = KeyPath.root().key("sandbox");
    private static final List<String> KEYS =
            List.of("kind", "network", "workdir", "memory_mb", "pids", "keep_files", "image");
    /** The most {@code keep_files} globs. */
    static final int MAX_GLOBS = 64;

    private final ConfigReader reader;

    SandboxReader(ConfigReader reader) {
        this.reader = reader;
    }

    Profile.Sandbox sandbox(JsonNode node) {
        if (node == null || reader.mapping(node, SANDBOX).isEmpty()) {
            return Profile.Sandbox.NONE;
        }
        reader.allowKeys(node, SANDBOX, KEYS);
        Profile.SandboxKind kind = reader.oneOf(node.get("kind"), SANDBOX.key("kind"), false, "sandbox kind", kinds())
                .orElse(Profile.SandboxKind.NONE);
        if (kind == Profile.SandboxKind.NONE) {
            for (String key : KEYS) {
                if (!key.equals("kind") && node.has(key)) {
                    reader.problem(
                            SANDBOX.key(key),
                            "has no effect without a sandbox; set sandbox.kind to bwrap or podman, or remove the key");
                }
            }
            return Profile.Sandbox.NONE;
        }
        boolean network = reader.bool(node.get("network"), SANDBOX.key("network"), false);
        Optional<String> workdir = reader.text(node.get("workdir"), SANDBOX.key("workdir"), false)
                .filter(w -> validPath(w, SANDBOX.key("workdir")));
        Optional<Long> memory = node.has("memory_mb")
                ? Optional.of(reader.longInteger(
                        node.get("memory_mb"),
                        SANDBOX.key("memory_mb"),
                        Profile.Sandbox.MIN_MEMORY_MB,
                        Profile.Sandbox.MAX_MEMORY_MB,
                        0))
                : Optional.empty();
        Optional<Integer> pids = node.has("pids")
                ? Optional.of(reader.integer(
                        node.get("pids"), SANDBOX.key("pids"), Profile.Sandbox.MIN_PIDS, Profile.Sandbox.MAX_PIDS, 0))
                : Optional.empty();
        List<String> keep = reader.distinctStrings(
                node.get("keep_files"), SANDBOX.key("keep_files"), "must be a non-empty list of globs");
        if (keep.size() > MAX_GLOBS) {
            reader.problem(SANDBOX.key("keep_files"), "lists " + keep.size() + " globs; at most " + MAX_GLOBS);
        }
        for (int i = 0; i < keep.size(); i++) {
            glob(keep.get(i), SANDBOX.key("keep_files").index(i));
        }
        Optional<String> image =
                reader.text(node.get("image"), SANDBOX.key("image"), kind == Profile.SandboxKind.PODMAN);
        if (kind != Profile.SandboxKind.PODMAN && node.has("image")) {
            reader.problem(SANDBOX.key("image"), "is for podman sandboxes; remove it or set sandbox.kind: podman");
        }
        if (image.isPresent()
                && (image.get().startsWith("-") || image.get().chars().anyMatch(Character::isWhitespace))) {
            reader.problem(SANDBOX.key("image"), "must be an image name such as localhost/agent:1, without spaces");
        }
        return new Profile.Sandbox(
                kind, network, workdir, memory.filter(m -> m > 0), pids.filter(p -> p > 0), keep, image);
    }

    /** A path the worker can resolve (relative ones against its working directory, as a command's program). */
    private boolean validPath(String text, KeyPath at) {
        try {
            Path.of(text);
            return true;
        } catch (InvalidPathException e) {
            reader.problem(at, "is not a valid path: " + e.getReason());
            return false;
        }
    }

    /** A glob over paths relative to the work directory: not absolute, no {@code ..}, and one the JDK parses. */
    private void glob(String g, KeyPath at) {
        if (g.startsWith("/")) {
            reader.problem(at, "must be relative to the work directory (no leading /)");
            return;
        }
        if (List.of(g.split("/")).contains("..")) {
            reader.problem(at, "must not leave the work directory (no ..)");
            return;
        }
        try {
            FileSystems.getDefault().getPathMatcher("glob:" + g);
        } catch (PatternSyntaxException e) {
            reader.problem(at, "is not a valid glob: " + e.getDescription());
        }
    }

    private static Map<String, Profile.SandboxKind> kinds() {
        Map<String, Profile.SandboxKind> kinds = new LinkedHashMap<>();
        for (Profile.SandboxKind k : Profile.SandboxKind.values()) {
            kinds.put(k.wire(), k);
        }
        return kinds;
    }
}
