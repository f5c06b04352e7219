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
        VigiloProcess.Result first = VigiloProcess.run(home, Map.of(), JVM, 180, "quickstart");
        assertThat(first.exitCode()).as(first.err()).isZero();
        assertThat(first.out())
                .contains(
                        "Uploaded the example dataset",
                        "cases:           12",
                        "verified:        12 cases",
                        "embedded PostgreSQL",
                        "Prepared a run plan",
                        "plan ready, 1 chunk(s), 12 cases",
                        "{overall=12, math=6, geography=4}");
        assertThat(home.resolve("postgres")).isDirectory();
        assertThat(home.resolve("objects/datasets")).isDirectory();

        VigiloProcess.Result second = VigiloProcess.run(home, Map.of(), JVM, 180, "quickstart");
        assertThat(second.exitCode()).as(second.err()).isZero();
        assertThat(uploadId(second.out())).isEqualTo(uploadId(first.out()));
        assertThat(runId(second.out())).isEqualTo(runId(first.out()));

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
        Process p = new ProcessBuilder(launcher.toString(), "--version")
                .redirectErrorStream(true)
                .start();
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        String output = new String(p.getInputStream().readAllBytes());
        assertThat(p.exitValue()).as(output).isZero();
        assertThat(output).startsWith("vigilo 0.1.0-SNAPSHOT");
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
