package dev.vigilo.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The repository's {@code vigilo} launcher chooses the JIT options of each command (docs/configuration.md,
 * "Start-up"): short commands delay the optimizing compiler, the worker (and an eval of a large dataset) inlines
 * less, the dashboard keeps the JVM's default, the session log batch commands and an eval of a small dataset file use
 * the quick compiler alone. As in {@link LauncherHeapTest}, the real
 * script runs from a copy of the repository layout with a {@code java} first on its PATH that prints its arguments.
 */
class LauncherJitTest {
    /** The options that delay C2 (ten times the JVM's default thresholds). */
    private static final List<String> DELAYED_C2 = List.of(
            "-XX:Tier4InvocationThreshold=50000",
            "-XX:Tier4MinInvocationThreshold=6000",
            "-XX:Tier4CompileThreshold=150000",
            "-XX:Tier4BackEdgeThreshold=400000");
    /** The options that make C2 inline less (the worker's and a large eval's). */
    private static final List<String> LEAN_C2 =
            List.of("-XX:FreqInlineSize=100", "-XX:InlineSmallCode=1000", "-XX:MaxInlineLevel=6");

    @TempDir
    Path root;

    private LauncherCopy launcher;

    @BeforeEach
    void layout() throws IOException {
        launcher = new LauncherCopy(root);
    }

    /** The JIT options of the java command line the launcher runs for {@code args}. */
    private List<String> jit(Map<String, String> env, String... args) throws Exception {
        LauncherCopy.Launch l = launcher.launch(env, args);
        assertThat(l.exit()).as(l.stderr()).isZero();
        // the command's own arguments reach it unchanged, after the jar
        assertThat(l.javaArguments()).endsWith(args);
        return l.javaArguments().stream()
                .filter(a -> a.startsWith("-XX:Tier")
                        || a.startsWith("-XX:FreqInlineSize")
                        || a.startsWith("-XX:InlineSmallCode")
                        || a.startsWith("-XX:MaxInlineLevel"))
                .toList();
    }

    @Test
    void shortCommandsDelayTheOptimizingCompiler() throws Exception {
        assertThat(jit(Map.of(), "dataset", "upload", "cases.jsonl")).isEqualTo(DELAYED_C2);
        assertThat(jit(Map.of(), "run", "create", "--profile-file", "p.yaml", "--dataset-upload-id", "x"))
                .isEqualTo(DELAYED_C2);
        assertThat(jit(Map.of(), "run", "status", "x")).isEqualTo(DELAYED_C2);
        assertThat(jit(Map.of(), "--version")).isEqualTo(DELAYED_C2);
        // An option's value that reads "worker" is not the command.
        assertThat(jit(Map.of(), "--control-db", "worker", "dataset", "list")).isEqualTo(DELAYED_C2);
    }

    @Test
    void theWorkerInlinesLessAndTheDashboardKeepsTheJvmsDefault() throws Exception {
        assertThat(jit(Map.of(), "worker", "--concurrency", "64", "--exit-when-idle"))
                .isEqualTo(LEAN_C2);
        assertThat(jit(Map.of(), "--storage-config", "s.toml", "worker")).isEqualTo(LEAN_C2);
        assertThat(jit(Map.of(), "serve", "--port", "0")).isEmpty();
    }

    @Test
    void anEvalOfASmallDatasetFileUsesTheQuickCompilerAlone() throws Exception {
        Path small = Files.writeString(root.resolve("small.jsonl"), "{\"id\":\"a\",\"input\":\"x\"}\n");
        Path limit = sized("limit.jsonl", 16L << 20);
        Path large = sized("large.jsonl", (16L << 20) + 1);
        assertThat(jit(Map.of(), "eval", "--profile-file", "p.yaml", "--dataset", small.toString()))
                .containsExactly("-XX:TieredStopAtLevel=1");
        assertThat(jit(Map.of(), "eval", "--dataset=" + limit, "--profile-file", "p.yaml"))
                .containsExactly("-XX:TieredStopAtLevel=1");
        // Larger, a dataset already uploaded, or a file that is not there (eval refuses it): C2, inlining less.
        assertThat(jit(Map.of(), "eval", "--profile-file", "p.yaml", "--dataset", large.toString()))
                .isEqualTo(LEAN_C2);
        assertThat(jit(Map.of(), "eval", "--profile-file", "p.yaml", "--dataset-upload-id", "x"))
                .isEqualTo(LEAN_C2);
        // A symbolic link counts as the file it names.
        Path link = Files.createSymbolicLink(root.resolve("link.jsonl"), large);
        assertThat(jit(Map.of(), "eval", "--profile-file", "p.yaml", "--dataset", link.toString()))
                .isEqualTo(LEAN_C2);
        assertThat(jit(
                        Map.of(),
                        "eval",
                        "--profile-file",
                        "p.yaml",
                        "--dataset",
                        root.resolve("none").toString()))
                .isEqualTo(LEAN_C2);
    }

    /** A sparse file of {@code bytes} bytes (the launcher reads only its size). */
    private Path sized(String name, long bytes) throws IOException {
        Path file = root.resolve(name);
        try (java.io.RandomAccessFile f = new java.io.RandomAccessFile(file.toFile(), "rw")) {
            f.setLength(bytes);
        }
        return file;
    }

    @Test
    void sessionBatchCommandsUseTheQuickCompilerAlone() throws Exception {
        assertThat(jit(Map.of(), "session", "verify", "log.zstd")).containsExactly("-XX:TieredStopAtLevel=1");
        assertThat(jit(Map.of(), "session", "view", "log.zstd")).isEqualTo(DELAYED_C2);
    }

    @Test
    void javaOptionsComeAfterAndWin() throws Exception {
        List<String> args = launcher.launch(
                        Map.of("VIGILO_JAVA_OPTS", "-XX:Tier4InvocationThreshold=5000"), "dataset", "list")
                .javaArguments();
        assertThat(args.indexOf("-XX:Tier4InvocationThreshold=5000"))
                .isGreaterThan(args.indexOf("-XX:Tier4InvocationThreshold=50000"));
    }

    @Test
    void aFlightRecordingOrAnAgentTurnsTheClassArchiveOff() throws Exception {
        // A java that "records" the archive it is asked for, so the launcher finds one and maps it.
        launcher.javaScript("""
                #!/bin/sh
                for a in "$@"; do
                  case "$a" in -XX:ArchiveClassesAtExit=*) echo archive > "${a#-XX:ArchiveClassesAtExit=}" ;; esac
                  echo "$a"
                done
                """);
        // What the archive's key is made of: the jars and the Java installation's modules (here beside bin/java).
        Files.writeString(
                Files.createDirectories(root.resolve("cli/target/lib")).resolve("a.jar"), "");
        Files.writeString(Files.createDirectories(root.resolve("lib")).resolve("modules"), "");
        Path home = Files.createDirectories(root.resolve("home"));
        assertThat(javaArguments(Map.of("VIGILO_HOME", home.toString())))
                .anyMatch(a -> a.startsWith("-XX:SharedArchiveFile="));
        for (String opts : List.of(
                "-XX:StartFlightRecording=filename=w.jfr",
                "-javaagent:/x/agent.jar",
                "-agentlib:jdwp=transport=dt_socket")) {
            assertThat(javaArguments(Map.of("VIGILO_HOME", home.toString(), "VIGILO_JAVA_OPTS", opts)))
                    .as(opts)
                    .noneMatch(a -> a.startsWith("-XX:SharedArchiveFile="))
                    .contains(opts);
        }
    }

    /** Every argument of the java command line the launcher runs for {@code dataset list}, the archive on. */
    private List<String> javaArguments(Map<String, String> env) throws Exception {
        Map<String, String> on = new java.util.HashMap<>(env);
        on.put("VIGILO_CDS", "on");
        return launcher.launch(on, "dataset", "list").javaArguments();
    }
}
