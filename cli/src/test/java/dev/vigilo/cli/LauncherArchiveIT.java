package dev.vigilo.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The launcher's class-data archive (docs/configuration.md, "Start-up") with the real JVM and this build's jar, in a
 * copy of the repository layout (the script, a copy of the CLI jar, its libraries linked) so the jar can change
 * without touching the build: recorded once and reused, holding the classes of an evaluation's commands (database,
 * migrations), and after a jar change neither used (a JVM given a stale archive with {@code -Xshare:on} would refuse
 * to start) nor kept in the way: a new one is recorded for the new jar.
 */
class LauncherArchiveIT {
    @TempDir
    Path root;

    @TempDir
    Path home;

    private Path jar;

    @BeforeEach
    void layout() throws Exception {
        Path target = Files.createDirectories(root.resolve("cli/target"));
        Files.copy(Path.of("..", "vigilo").toAbsolutePath().normalize(), root.resolve("vigilo"));
        root.resolve("vigilo").toFile().setExecutable(true);
        jar = Files.copy(Path.of("target", "vigilo-cli.jar").toAbsolutePath(), target.resolve("vigilo-cli.jar"));
        // The jar's manifest names its libraries relative to it: lib/*.jar.
        Files.createSymbolicLink(target.resolve("lib"), Path.of("target", "lib").toAbsolutePath());
        // Newer than every source of this (source-less) copy: the launcher does not build.
        Files.writeString(target.resolve(".vigilo-build-stamp"), "");
    }

    @Test
    void theArchiveIsRecordedOnceCoversAnEvaluationAndIsRemadeWhenTheJarChanges() throws Exception {
        assertThat(launch()).startsWith("vigilo 0.1.0-SNAPSHOT");
        List<Path> first = archives();
        assertThat(first).hasSize(1);
        long recorded = Files.getLastModifiedTime(first.get(0)).toMillis();

        // Reused: no second recording, and a JVM that must map it (-Xshare:on) starts.
        assertThat(launch("-Xshare:on")).startsWith("vigilo 0.1.0-SNAPSHOT");
        assertThat(archives()).isEqualTo(first);
        assertThat(Files.getLastModifiedTime(first.get(0)).toMillis()).isEqualTo(recorded);

        // It holds what dataset upload, run create and the worker load beyond the command tree: the control
        // database's, Flyway's, the JDBC driver's and the pool's classes come from it.
        String loads = classLoads(first.get(0));
        for (String name : List.of(
                "dev.vigilo.control.ControlDatabase",
                "org.flywaydb.core.Flyway",
                "org.postgresql.Driver",
                "com.zaxxer.hikari.HikariDataSource",
                "dev.vigilo.exec.worker.Worker")) {
            assertThat(loads)
                    .as(name)
                    .containsPattern(
                            "(?m)^\\S+ " + java.util.regex.Pattern.quote(name) + " source: shared objects file");
        }

        // A new jar (here: the same bytes, a new time, as a rebuild leaves it): the old archive no longer fits it
        // and is not used (-Xshare:on would fail on it); a new one is recorded and mapped.
        Files.setLastModifiedTime(
                jar, FileTime.fromMillis(Files.getLastModifiedTime(jar).toMillis() + 3_600_000));
        assertThat(launch("-Xshare:on")).startsWith("vigilo 0.1.0-SNAPSHOT");
        List<Path> after = archives();
        assertThat(after).hasSize(2).containsAll(first);
        Path remade = after.stream().filter(p -> !first.contains(p)).findFirst().orElseThrow();
        assertThat(classLoads(remade))
                .containsPattern("(?m)^\\S+ org.flywaydb.core.Flyway source: shared objects file");
    }

    private List<Path> archives() throws Exception {
        try (var files = Files.list(home.resolve("cds"))) {
            return files.sorted().toList();
        }
    }

    /** {@code vigilo --version} through the copied launcher with {@code javaOptions}; its output, after exit 0. */
    private String launch(String... javaOptions) throws Exception {
        ProcessBuilder pb =
                new ProcessBuilder(root.resolve("vigilo").toString(), "--version").redirectErrorStream(true);
        pb.environment().remove("VIGILO_CDS");
        pb.environment().put("VIGILO_HOME", home.toString());
        pb.environment().put("VIGILO_JAVA_OPTS", String.join(" ", javaOptions));
        return run(pb);
    }

    /**
     * The class-loading log of the training workload run on {@code archive} with {@code -Xshare:on} (it loads what
     * the archive was trained with).
     */
    private String classLoads(Path archive) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xshare:on",
                "-XX:SharedArchiveFile=" + archive,
                "-Xlog:class+load=info",
                "-cp",
                jar.toString(),
                StartupTraining.class.getName()));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        pb.environment().put("VIGILO_HOME", home.toString());
        return run(pb);
    }

    private static String run(ProcessBuilder pb) throws Exception {
        Process p = pb.start();
        String output = new String(p.getInputStream().readAllBytes());
        assertThat(p.waitFor(180, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(output).isZero();
        return output;
    }
}
