package dev.vigilo.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The repository's {@code vigilo} launcher chooses the JIT options of each command (docs/configuration.md,
 * "Start-up"): short commands delay the optimizing compiler, the long-running worker and dashboard keep the JVM's
 * default, the session log batch commands use the quick compiler alone. As in {@link LauncherHeapTest}, the real
 * script runs from a copy of the repository layout with a {@code java} first on its PATH that prints its arguments.
 */
class LauncherJitTest {
    /** The options that delay C2 (ten times the JVM's default thresholds). */
    private static final List<String> DELAYED_C2 = List.of(
            "-XX:Tier4InvocationThreshold=50000",
            "-XX:Tier4MinInvocationThreshold=6000",
            "-XX:Tier4CompileThreshold=150000",
            "-XX:Tier4BackEdgeThreshold=400000");

    @TempDir
    Path root;

    private Path bin;

    @BeforeEach
    void layout() throws IOException {
        Path script = Path.of("..", "vigilo").toAbsolutePath().normalize();
        Files.copy(script, root.resolve("vigilo"));
        root.resolve("vigilo").toFile().setExecutable(true);
        Path target = Files.createDirectories(root.resolve("cli/target"));
        Files.writeString(target.resolve("vigilo-cli.jar"), "");
        Files.writeString(target.resolve(".vigilo-build-stamp"), "");
        bin = Files.createDirectories(root.resolve("bin"));
        Path java = bin.resolve("java");
        Files.writeString(java, "#!/bin/sh\nfor a in \"$@\"; do echo \"$a\"; done\n");
        Files.setPosixFilePermissions(java, PosixFilePermissions.fromString("rwxr-xr-x"));
    }

    /** The JIT options of the java command line the launcher runs for {@code args}. */
    private List<String> jit(Map<String, String> env, String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(root.resolve("vigilo").toString()));
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd).directory(root.toFile());
        pb.environment().remove("VIGILO_JAVA_OPTS");
        pb.environment().put("PATH", bin + ":" + System.getenv("PATH"));
        pb.environment().put("VIGILO_CDS", "off");
        pb.environment().putAll(env);
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(err).isZero();
        List<String> javaArguments = out.lines().toList();
        // the command's own arguments reach it unchanged, after the jar
        assertThat(javaArguments).endsWith(args);
        return javaArguments.stream().filter(a -> a.startsWith("-XX:Tier")).toList();
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
    void longRunningCommandsKeepTheJvmsDefault() throws Exception {
        assertThat(jit(Map.of(), "worker", "--concurrency", "64", "--exit-when-idle"))
                .isEmpty();
        assertThat(jit(Map.of(), "--storage-config", "s.toml", "worker")).isEmpty();
        assertThat(jit(Map.of(), "serve", "--port", "0")).isEmpty();
    }

    @Test
    void sessionBatchCommandsUseTheQuickCompilerAlone() throws Exception {
        assertThat(jit(Map.of(), "session", "verify", "log.zstd")).containsExactly("-XX:TieredStopAtLevel=1");
        assertThat(jit(Map.of(), "session", "view", "log.zstd")).isEqualTo(DELAYED_C2);
    }

    @Test
    void javaOptionsComeAfterAndWin() throws Exception {
        List<String> cmd = new ArrayList<>(List.of(root.resolve("vigilo").toString(), "dataset", "list"));
        ProcessBuilder pb = new ProcessBuilder(cmd).directory(root.toFile());
        pb.environment().put("PATH", bin + ":" + System.getenv("PATH"));
        pb.environment().put("VIGILO_CDS", "off");
        pb.environment().put("VIGILO_JAVA_OPTS", "-XX:Tier4InvocationThreshold=5000");
        Process p = pb.start();
        List<String> args = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8)
                .lines()
                .toList();
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(args.indexOf("-XX:Tier4InvocationThreshold=5000"))
                .isGreaterThan(args.indexOf("-XX:Tier4InvocationThreshold=50000"));
    }

    @Test
    void aFlightRecordingOrAnAgentTurnsTheClassArchiveOff() throws Exception {
        // A java that "records" the archive it is asked for, so the launcher finds one and maps it.
        Files.writeString(bin.resolve("java"), """
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
        ProcessBuilder pb =
                new ProcessBuilder(root.resolve("vigilo").toString(), "dataset", "list").directory(root.toFile());
        pb.environment().remove("VIGILO_JAVA_OPTS");
        pb.environment().remove("VIGILO_CDS");
        pb.environment().put("PATH", bin + ":" + System.getenv("PATH"));
        pb.environment().putAll(env);
        Process p = pb.start();
        List<String> args = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8)
                .lines()
                .toList();
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        return args;
    }
}
