package dev.vigilo.cli;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;

/**
 * Points {@code java.io.tmpdir} at a directory this process can write, before anything unpacks or spills there: the
 * native libraries of zstd-jni, Lance and Arrow (about 181 MB per process that opens a checkpoint log), JNA's
 * dispatch library, the embedded PostgreSQL binaries, upload spill files, agent scratch directories. The candidates,
 * in order:
 *
 * <ol>
 *   <li>the directory the java command line names ({@code -Djava.io.tmpdir=...}, also through
 *       {@code VIGILO_JAVA_OPTS}, {@code JDK_JAVA_OPTIONS} or {@code JAVA_TOOL_OPTIONS}), when it does;
 *   <li>{@code <VIGILO_HOME>/tmp}, created when missing, so what a command leaves after a {@code kill -9} stays in
 *       Vigilo home;
 *   <li>{@code $TMPDIR}, or {@code /tmp} when it is not set: the system's temporary directory.
 * </ol>
 *
 * The first in which a file can be created now wins (probed by creating and deleting one). When none can, the first
 * candidate stays and the native libraries' loaders report it in one line (exit 5). JNA, which would otherwise
 * unpack into {@code ~/.cache/JNA}, is pointed at the same directory ({@code jna.tmpdir}, unless given).
 *
 * <p>Must run before anything creates a temporary file: the JDK reads the property once, at its first temporary
 * file, and some loaders accept no other directory.
 */
final class TemporaryDirectory {
    static final String PROPERTY = "java.io.tmpdir";
    static final String JNA_PROPERTY = "jna.tmpdir";

    private TemporaryDirectory() {}

    /** Sets the properties; returns the directory in use. */
    static Path useVigiloHome(Environment environment) {
        List<Path> candidates = candidates(environment, commandLineValue(PROPERTY));
        Path chosen = candidates.stream()
                .filter(TemporaryDirectory::writable)
                .findFirst()
                .orElse(candidates.get(0));
        System.setProperty(PROPERTY, chosen.toString());
        if (commandLineValue(JNA_PROPERTY).isEmpty()) {
            System.setProperty(JNA_PROPERTY, chosen.toString());
        }
        return chosen;
    }

    /** The directories to try, in order, without repeats. */
    static List<Path> candidates(Environment environment, Optional<String> commandLine) {
        LinkedHashSet<Path> candidates = new LinkedHashSet<>();
        commandLine.filter(v -> !v.isBlank()).map(Path::of).ifPresent(candidates::add);
        try {
            candidates.add(environment.vigiloHome().resolve("tmp"));
        } catch (RuntimeException e) {
            // A VIGILO_HOME that is not a path: the commands that need Vigilo home say so.
        }
        candidates.add(Path.of(environment.get("TMPDIR").orElse("/tmp")));
        return new ArrayList<>(candidates);
    }

    /** Whether a file can be created in {@code directory} (created when missing) right now. */
    static boolean writable(Path directory) {
        try {
            Files.createDirectories(directory);
            Path probe = Files.createTempFile(directory, ".vigilo-probe-", ".tmp");
            Files.delete(probe);
            return true;
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }

    // -Dname=value from the command line, JDK_JAVA_OPTIONS or JAVA_TOOL_OPTIONS (all are input arguments).
    private static Optional<String> commandLineValue(String property) {
        String prefix = "-D" + property + "=";
        Optional<String> value = Optional.empty();
        for (String argument : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
            if (argument.startsWith(prefix)) {
                value = Optional.of(argument.substring(prefix.length())); // the last one wins, as in the JVM
            }
        }
        return value;
    }
}
