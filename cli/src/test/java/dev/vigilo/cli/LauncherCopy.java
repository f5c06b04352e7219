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

/**
 * The repository's {@code vigilo} launcher in a copy of the repository layout whose CLI jar is up to date (so the
 * launcher does not build), with a {@code java} first on its PATH that prints the command line it was given instead of
 * starting a JVM: a test sees exactly what the launcher would run. The launcher tests' one fixture.
 */
final class LauncherCopy {
    /** One launch: the launcher's exit status, the arguments it gave java, its error output. */
    record Launch(int exit, List<String> javaArguments, String stderr) {
        /** The -Xmx options of the command line, in order (the JVM takes the last). */
        List<String> heaps() {
            return javaArguments.stream().filter(a -> a.startsWith("-Xmx")).toList();
        }
    }

    final Path root;
    final Path bin;

    LauncherCopy(Path root) throws IOException {
        this.root = root;
        Path script = Path.of("..", "vigilo").toAbsolutePath().normalize();
        Files.copy(script, root.resolve("vigilo"));
        root.resolve("vigilo").toFile().setExecutable(true);
        Path target = Files.createDirectories(root.resolve("cli/target"));
        Files.writeString(target.resolve("vigilo-cli.jar"), "");
        // The build stamp is newer than every source of this (source-less) copy: the launcher does not build.
        Files.writeString(target.resolve(".vigilo-build-stamp"), "");
        bin = Files.createDirectories(root.resolve("bin"));
        javaScript("#!/bin/sh\nfor a in \"$@\"; do echo \"$a\"; done\n");
    }

    /** Replaces the {@code java} the launcher finds with {@code script}. */
    void javaScript(String script) throws IOException {
        Path java = bin.resolve("java");
        Files.writeString(java, script);
        Files.setPosixFilePermissions(java, PosixFilePermissions.fromString("rwxr-xr-x"));
    }

    /**
     * Runs the launcher with {@code args}: without the caller's {@code VIGILO_JAVA_OPTS} and
     * {@code VIGILO_WORKER_HEAP_MB}, the class archive off ({@code VIGILO_CDS=off}), then {@code env} over that.
     */
    Launch launch(Map<String, String> env, String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of(root.resolve("vigilo").toString()));
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd).directory(root.toFile());
        pb.environment().remove("VIGILO_JAVA_OPTS");
        pb.environment().remove("VIGILO_WORKER_HEAP_MB");
        pb.environment().put("PATH", bin + ":" + System.getenv("PATH"));
        pb.environment().put("VIGILO_CDS", "off");
        pb.environment().putAll(env);
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        return new Launch(p.exitValue(), out.lines().toList(), err);
    }
}
