package dev.vigilo.common.crash;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The command line of a child JVM that a test starts (to kill it, or to run a second process): this JVM's java and
 * class path, {@link CrashSweep#FAST_START}, java.nio opened for Arrow, and a {@code java.io.tmpdir} inside the
 * test's directory, because Lance unpacks its ~180 MB native library there and a kill -9 leaves the copy behind: it
 * must go away with the test's directory rather than pile up in /tmp or under target/.
 */
public final class ChildJvm {
    private ChildJvm() {}

    /** {@code java [options] -cp <this class path> mainClass args...}, temporary files under {@code testDir}. */
    public static List<String> command(Path testDir, List<String> options, String mainClass, String... args) {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(CrashSweep.FAST_START);
        command.add("--add-opens=java.base/java.nio=ALL-UNNAMED");
        command.add("-Djava.io.tmpdir=" + tmp(testDir));
        command.addAll(options);
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(mainClass);
        command.addAll(List.of(args));
        return command;
    }

    /** Like {@link #command(Path, List, String, String...)} without extra options. */
    public static List<String> command(Path testDir, String mainClass, String... args) {
        return command(testDir, List.of(), mainClass, args);
    }

    /** The {@code java.io.tmpdir} of children of the test whose directory is {@code testDir} (created). */
    public static String tmp(Path testDir) {
        try {
            return Files.createDirectories(testDir.resolve("jvm-tmp")).toString();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Every line the child prints on its standard output, read to its end (the child's exit, or its death); a read
     * that fails ends the list with a line {@code READ FAILED <the exception>}, for the test's message.
     */
    public static List<String> outputLines(Process child) {
        List<String> lines = new ArrayList<>();
        try (BufferedReader r =
                new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
            String l;
            while ((l = r.readLine()) != null) {
                lines.add(l);
            }
        } catch (IOException e) {
            lines.add("READ FAILED " + e);
        }
        return lines;
    }
}
