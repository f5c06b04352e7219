package dev.vigilo.control;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * Starts a detached {@link EmbeddedServerHost} JVM with this JVM's java binary and class path.
 *
 * <p>Detached means: its stdin is {@code /dev/null} and its output goes to {@code server.log}, so it never holds a
 * Vigilo command's pipes open; its working directory is the server directory, so it does not pin the user's; and it
 * runs in its own session ({@code setsid}), so a Ctrl-C delivered to the terminal's process group does not stop a
 * server other commands are using. A child process outlives its parent on Linux and the JVM does not kill children
 * on exit.
 */
final class HostLauncher {

    // A server log larger than this is moved aside to server.log.1 before a new host starts.
    private static final long MAX_LOG_BYTES = 10L * 1024 * 1024;
    private static final List<String> SETSID_CANDIDATES = List.of("/usr/bin/setsid", "/bin/setsid");
    /** The class-data archive the command runs with, set by the {@code vigilo} launcher. */
    static final String STARTUP_ARCHIVE_PROPERTY = "vigilo.startup.archive";
    // System properties the host must share with its client for both to find the same PostgreSQL binaries.
    private static final List<String> INHERITED_PROPERTIES = List.of("java.io.tmpdir", "ot.epg.working-dir");

    private HostLauncher() {}

    static Process launch(EmbeddedLayout layout, String token, Duration idleGrace, int preferredPort) {
        Objects.requireNonNull(layout, "layout");
        rotateLog(layout.logFile());
        List<String> command = command(
                layout,
                token,
                idleGrace,
                preferredPort,
                Optional.ofNullable(System.getProperty(STARTUP_ARCHIVE_PROPERTY)));
        try {
            return new ProcessBuilder(command)
                    .directory(layout.root().toFile())
                    .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                    .redirectOutput(
                            ProcessBuilder.Redirect.appendTo(layout.logFile().toFile()))
                    .redirectErrorStream(true)
                    .start();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start " + String.join(" ", command), e);
        }
    }

    /**
     * The host's command line.
     *
     * @param archive the class-data archive this command runs with ({@link #STARTUP_ARCHIVE_PROPERTY}), if any
     */
    static List<String> command(
            EmbeddedLayout layout, String token, Duration idleGrace, int preferredPort, Optional<String> archive) {
        List<String> command = new ArrayList<>();
        SETSID_CANDIDATES.stream()
                .filter(path -> Files.isExecutable(Path.of(path)))
                .findFirst()
                .ifPresent(command::add);
        command.add(javaBinary());
        command.addAll(List.of("-Xmx128m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"));
        // The launcher's class-data archive of this build (docs/configuration.md, "Start-up"), when the command runs
        // with one: the host maps the JDK's and the shared libraries' classes from it too (its start, while a command
        // waits for it, took 0.2-0.3 s less). An archive that does not fit is ignored by the JVM, silently.
        archive.filter(a -> !a.isBlank() && Files.isReadable(Path.of(a))).ifPresent(a -> {
            command.add("-XX:SharedArchiveFile=" + a);
            command.add("-Xlog:cds*=off");
        });
        for (String property : INHERITED_PROPERTIES) {
            String value = System.getProperty(property);
            if (value != null) {
                command.add("-D" + property + "=" + value);
            }
        }
        command.addAll(List.of(
                "-cp",
                absoluteClassPath(),
                EmbeddedServerHost.class.getName(),
                layout.root().toString(),
                token,
                Long.toString(idleGrace.toMillis()),
                Integer.toString(preferredPort)));
        return command;
    }

    private static String javaBinary() {
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        if (Files.isExecutable(java)) {
            return java.toString();
        }
        return ProcessHandle.current()
                .info()
                .command()
                .orElseThrow(() -> new IllegalStateException(
                        "cannot find the java binary (java.home=" + System.getProperty("java.home") + ")"));
    }

    /** The host runs in another working directory, so relative class-path entries are resolved here. */
    private static String absoluteClassPath() {
        String classPath = System.getProperty("java.class.path", "");
        if (classPath.isEmpty()) {
            throw new IllegalStateException("java.class.path is empty; cannot start the embedded server host");
        }
        return Arrays.stream(classPath.split(File.pathSeparator))
                .filter(entry -> !entry.isEmpty())
                .map(entry -> Path.of(entry).toAbsolutePath().toString())
                .collect(Collectors.joining(File.pathSeparator));
    }

    private static void rotateLog(Path log) {
        try {
            if (Files.exists(log) && Files.size(log) > MAX_LOG_BYTES) {
                Files.move(log, log.resolveSibling(log.getFileName() + ".1"), StandardCopyOption.REPLACE_EXISTING);
            }
        } catch (IOException e) {
            // a big log is better than no server
        }
    }
}
