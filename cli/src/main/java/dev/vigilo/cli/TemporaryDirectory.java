package dev.vigilo.cli;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Points {@code java.io.tmpdir} at {@code <VIGILO_HOME>/tmp} when the java command line did not set it, so what a
 * command unpacks or spills there (the native libraries of Lance and Arrow, about 181 MB per process, upload
 * spill files, agent scratch directories) stays inside Vigilo home, even after a {@code kill -9}.
 *
 * <p>Must run before anything creates a temporary file: the JDK reads the property once, at its first temporary
 * file. If the directory cannot be created the default stays and the command's own errors say why.
 */
final class TemporaryDirectory {
    static final String PROPERTY = "java.io.tmpdir";

    private TemporaryDirectory() {}

    /** Sets the property (unless given on the command line); returns the directory in use. */
    static Path useVigiloHome(Environment environment) {
        if (!givenOnCommandLine()) {
            try {
                Path directory =
                        Files.createDirectories(environment.vigiloHome().resolve("tmp"));
                System.setProperty(PROPERTY, directory.toString());
            } catch (IOException | RuntimeException e) {
                // Keep the default; VIGILO_HOME problems are reported by the commands that need it.
            }
        }
        return Path.of(System.getProperty(PROPERTY));
    }

    // -Djava.io.tmpdir from the command line, JDK_JAVA_OPTIONS or JAVA_TOOL_OPTIONS (all are input arguments).
    private static boolean givenOnCommandLine() {
        return ManagementFactory.getRuntimeMXBean().getInputArguments().stream()
                .anyMatch(argument -> argument.startsWith("-D" + PROPERTY + "="));
    }
}
