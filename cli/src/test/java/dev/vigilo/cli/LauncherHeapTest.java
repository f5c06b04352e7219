package dev.vigilo.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigilo.cli.LauncherCopy.Launch;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The repository's {@code vigilo} launcher sizes a worker's heap from its concurrency (docs/configuration.md, "Worker
 * heap"): the real script runs from a copy of the repository layout whose CLI jar is up to date, with a {@code java}
 * first on its PATH that prints the command line it was given instead of starting a JVM, so the test sees exactly
 * what the launcher would run.
 */
class LauncherHeapTest {
    @TempDir
    Path root;

    private LauncherCopy launcher;

    @BeforeEach
    void layout() throws IOException {
        launcher = new LauncherCopy(root);
    }

    private Launch launch(Map<String, String> env, String... args) throws Exception {
        return launcher.launch(env, args);
    }

    @Test
    void aWorkersHeapIs96MiBPlus2MiBPerCaseInFlightUpTo64ThenAQuarterMiB() throws Exception {
        assertThat(launch(Map.of(), "worker").heaps()).containsExactly("-Xmx104m");
        assertThat(launch(Map.of(), "worker", "--concurrency", "64", "--exit-when-idle")
                        .heaps())
                .containsExactly("-Xmx224m");
        assertThat(launch(Map.of(), "--control-db", "jdbc:postgresql://h/db", "worker", "--concurrency=256")
                        .heaps())
                .containsExactly("-Xmx272m");
        assertThat(launch(Map.of(), "worker", "--concurrency", "1024").heaps()).containsExactly("-Xmx464m");
        assertThat(launch(Map.of(), "worker", "--concurrency=4096").heaps()).containsExactly("-Xmx1232m");
        // The command's own arguments reach it unchanged.
        Launch l = launch(Map.of(), "worker", "--concurrency", "8");
        assertThat(l.javaArguments())
                .endsWith("-jar", root.resolve("cli/target/vigilo-cli.jar").toString(), "worker", "--concurrency", "8");
    }

    @Test
    void evalGetsTheWorkersHeapButAtLeast256MiBForItsUploadAndPlan() throws Exception {
        assertThat(launch(Map.of(), "eval", "--profile-file", "p.yaml", "--dataset", "d.jsonl")
                        .heaps())
                .containsExactly("-Xmx256m");
        assertThat(launch(Map.of(), "eval", "--concurrency", "64").heaps()).containsExactly("-Xmx256m");
        assertThat(launch(Map.of(), "eval", "--concurrency=1024").heaps()).containsExactly("-Xmx464m");
        assertThat(launch(Map.of("VIGILO_WORKER_HEAP_MB", "off"), "eval").heaps())
                .isEmpty();
    }

    @Test
    void otherCommandsKeepTheJvmsDefault() throws Exception {
        assertThat(launch(Map.of(), "run", "list").heaps()).isEmpty();
        // An option's value that reads "worker" is not the command.
        assertThat(launch(Map.of(), "--storage-config", "worker", "dataset", "list")
                        .heaps())
                .isEmpty();
    }

    @Test
    void aBadConcurrencyIsLeftToTheCommandAndSizedForTheDefault() throws Exception {
        assertThat(launch(Map.of(), "worker", "--concurrency", "many").heaps()).containsExactly("-Xmx104m");
        assertThat(launch(Map.of(), "worker", "--concurrency", "100000").heaps())
                .containsExactly("-Xmx104m");
        assertThat(launch(Map.of(), "worker", "--concurrency", "4097").heaps()).containsExactly("-Xmx104m");
    }

    @Test
    void theSizeCanBeOverridden() throws Exception {
        assertThat(launch(Map.of("VIGILO_WORKER_HEAP_MB", "300"), "worker").heaps())
                .containsExactly("-Xmx300m");
        assertThat(launch(Map.of("VIGILO_WORKER_HEAP_MB", "off"), "worker").heaps())
                .isEmpty();
        // An -Xmx of VIGILO_JAVA_OPTS comes last, so the JVM takes it.
        assertThat(launch(Map.of("VIGILO_JAVA_OPTS", "-Xmx1g"), "worker").heaps())
                .containsExactly("-Xmx104m", "-Xmx1g");
        Launch bad = launch(Map.of("VIGILO_WORKER_HEAP_MB", "lots"), "worker");
        assertThat(bad.exit()).isEqualTo(3);
        assertThat(bad.javaArguments()).isEmpty();
        assertThat(bad.stderr().strip())
                .isEqualTo("vigilo: VIGILO_WORKER_HEAP_MB must be a number of MiB or off, got 'lots'; unset it or"
                        + " fix it");
    }
}
