package dev.vigilo.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The README's first command on zero-setup defaults, as real processes: embedded PostgreSQL under VIGILO_HOME,
 * the local object store under VIGILO_HOME, and the repository's launcher script.
 */
class QuickstartIT {
    @TempDir
    Path home;

    /** A short idle grace so the embedded server stops soon after the last command, as it must. */
    private static final List<String> JVM = List.of("-Dvigilo.control.embedded.idle-grace=500");

    @Test
    void quickstartRunsOnEmbeddedDefaultsAndIsIdempotent() throws Exception {
        // The process runs in cli/, which has no examples/: the example agent is found where quickstart put it.
        VigiloProcess.Result first = VigiloProcess.run(home, Map.of(), JVM, 240, "quickstart");
        assertThat(first.exitCode()).as(first.err()).isZero();
        assertThat(first.out())
                .contains(
                        "Uploaded the example dataset",
                        "cases:           12",
                        "verified:        12 cases",
                        "embedded PostgreSQL",
                        "Created a run with the example profile",
                        "plan:            ready, 1 chunk(s), 12 cases",
                        "{overall=12, math=6, geography=4}",
                        "Executing 12 cases with an in-process worker");
        // The example agent answers 9 of 12 exactly (QuickAgentTest): overall passes, math fails, geography passes.
        assertSettledTable(first.out());
        assertThat(home.resolve("postgres")).isDirectory();
        assertThat(home.resolve("objects/datasets")).isDirectory();
        assertThat(home.resolve("quickstart/examples/agent/QuickAgent.java")).isRegularFile();

        VigiloProcess.Result second = VigiloProcess.run(home, Map.of(), JVM, 180, "quickstart");
        assertThat(second.exitCode()).as(second.err()).isZero();
        assertThat(uploadId(second.out())).isEqualTo(uploadId(first.out()));
        assertThat(runId(second.out())).isEqualTo(runId(first.out()));
        assertThat(second.out())
                .contains("already ended (settled); shown again, not executed twice")
                .doesNotContain("Executing");
        assertSettledTable(second.out());

        VigiloProcess.Result results =
                VigiloProcess.run(home, Map.of(), JVM, 120, "run", "results", runId(first.out()));
        assertThat(results.exitCode()).as(results.err()).isZero();
        assertThat(results.out().lines()).hasSize(12);
        assertThat(results.out())
                .contains("\"case_id\":\"capital-003\"", "\"output\":\"Sydney\"")
                .doesNotContain("\"error\":{");

        VigiloProcess.Result list = VigiloProcess.run(home, Map.of(), JVM, 120, "dataset", "list", "--json");
        assertThat(list.exitCode()).as(list.err()).isZero();
        assertThat(list.out()).contains(uploadId(first.out())).contains("quickstart-example");

        // With no vigilo command left, the embedded server stops by itself and removes its state file.
        Path state = home.resolve("postgres/server.properties");
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (Files.exists(state) && System.nanoTime() < deadline) {
            Thread.sleep(200);
        }
        assertThat(state).doesNotExist();
    }

    @Test
    void launcherScriptRunsTheBuiltCli() throws Exception {
        Path launcher = Path.of("..", "vigilo").toAbsolutePath().normalize();
        assertThat(launcher).isExecutable();
        // The jar was just packaged by this build: mark it fresh so the launcher runs it instead of rebuilding.
        Files.writeString(Path.of("target", ".vigilo-build-stamp"), "");
        // Without the class-data archive (covered below), so this run leaves the user's Vigilo home as it was.
        ProcessBuilder pb = new ProcessBuilder(launcher.toString(), "--version").redirectErrorStream(true);
        pb.environment().put("VIGILO_CDS", "off");
        Process p = pb.start();
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        String output = new String(p.getInputStream().readAllBytes());
        assertThat(p.exitValue()).as(output).isZero();
        assertThat(output).startsWith("vigilo 0.1.0-SNAPSHOT");
    }

    @Test
    void launcherRecordsAClassDataArchiveOncePerBuildAndRunsWithoutOne() throws Exception {
        Files.writeString(Path.of("target", ".vigilo-build-stamp"), "");
        Path cds = home.resolve("cds");

        // First use records the archive of this build; a run with -Xshare:on only starts if it maps it.
        assertThat(launch(Map.of("VIGILO_HOME", home.toString()))).startsWith("vigilo 0.1.0-SNAPSHOT");
        List<Path> archives;
        try (var files = Files.list(cds)) {
            archives = files.toList();
        }
        assertThat(archives).hasSize(1);
        assertThat(archives.get(0).getFileName().toString()).matches("vigilo-\\d+\\.jsa");
        long recorded = Files.getLastModifiedTime(archives.get(0)).toMillis();
        assertThat(launch(Map.of("VIGILO_HOME", home.toString(), "VIGILO_JAVA_OPTS", "-Xshare:on")))
                .startsWith("vigilo 0.1.0-SNAPSHOT");
        assertThat(Files.getLastModifiedTime(archives.get(0)).toMillis()).isEqualTo(recorded);

        // Whatever is at the archive's place, unusable or no home at all, the command runs (without sharing).
        archives.get(0).toFile().setWritable(true);
        Files.writeString(archives.get(0), "not a class-data archive");
        assertThat(launch(Map.of("VIGILO_HOME", home.toString()))).startsWith("vigilo 0.1.0-SNAPSHOT");
        Path notADirectory = Files.writeString(home.resolve("a-file"), "x");
        assertThat(launch(Map.of("VIGILO_HOME", notADirectory.toString()))).startsWith("vigilo 0.1.0-SNAPSHOT");
        Path off = home.resolve("off");
        assertThat(launch(Map.of("VIGILO_HOME", off.toString(), "VIGILO_CDS", "off")))
                .startsWith("vigilo 0.1.0-SNAPSHOT");
        assertThat(off.resolve("cds")).doesNotExist();
    }

    /** {@code ../vigilo --version} with {@code env}; returns its output (stdout and stderr) after asserting exit 0. */
    private static String launch(Map<String, String> env) throws Exception {
        ProcessBuilder pb = new ProcessBuilder(
                        Path.of("..", "vigilo").toAbsolutePath().normalize().toString(), "--version")
                .redirectErrorStream(true);
        pb.environment().remove("VIGILO_JAVA_OPTS");
        pb.environment().remove("VIGILO_CDS");
        pb.environment().putAll(env);
        Process p = pb.start();
        String output = new String(p.getInputStream().readAllBytes());
        assertThat(p.waitFor(120, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(output).isZero();
        return output;
    }

    private static void assertSettledTable(String out) {
        assertThat(out).contains("settled, verdict failed");
        assertThat(out)
                .containsPattern(
                        "overall\\s+12\\s+12\\s+9\\s+3\\s+0\\s+75\\.0%\\s+\\[46\\.8%, 91\\.1%\\]\\s+70\\.0%\\s+PASS");
        assertThat(out)
                .containsPattern(
                        "math\\s+6\\s+6\\s+5\\s+1\\s+0\\s+83\\.3%\\s+\\[43\\.6%, 97\\.0%\\]\\s+90\\.0%\\s+FAIL");
        assertThat(out)
                .containsPattern(
                        "geography\\s+4\\s+4\\s+3\\s+1\\s+0\\s+75\\.0%\\s+\\[30\\.1%, 95\\.4%\\]\\s+75\\.0%\\s+PASS");
        assertThat(out).contains("vigilo run results ");
    }

    private static String runId(String quickstartOutput) {
        return quickstartOutput
                .lines()
                .filter(l -> l.contains("run id:"))
                .findFirst()
                .orElseThrow()
                .replaceAll(".*run id:\\s*", "")
                .trim();
    }

    private static String uploadId(String quickstartOutput) {
        return quickstartOutput
                .lines()
                .filter(l -> l.contains("upload id:"))
                .findFirst()
                .orElseThrow()
                .replaceAll(".*upload id:\\s*", "")
                .trim();
    }
}
