package dev.vigilo.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.vigilo.sessionlog.LockFileEpochSource;
import dev.vigilo.sessionlog.SessionHeader;
import dev.vigilo.sessionlog.SessionLogWriter;
import dev.vigilo.sessionlog.WriterOptions;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/**
 * The workload the {@code vigilo} launcher records its class-data-sharing archive from (once per build, with
 * {@code -XX:ArchiveClassesAtExit}; docs/configuration.md): the classes a short command loads, so later commands
 * map them from the archive instead of loading them from the jars. It builds the whole command tree, writes a small
 * session log with the real writer into a temporary directory under Vigilo home, verifies it through the command
 * line with the output discarded, and deletes the directory. Then it loads, without initializing them, the classes
 * that an evaluation's commands load ({@code dataset upload}, {@code run create}, {@code worker}, {@code run
 * status}: the list {@value #CLASS_LIST}, recorded from those commands), since their database, migration and
 * execution code cannot run here without a database; the JVM links them when it writes the archive. Nothing durable
 * changes.
 *
 * <p>Exit 0 when the workload ran as expected, 1 otherwise (the launcher then keeps no archive).
 */
final class StartupTraining {
    /** Events of the small log: one short turn with the common event kinds. */
    private static final List<String> EVENTS = List.of(
            "{\"type\":\"turn/start\",\"time\":1760000000001,\"data\":{\"turn\":1}}",
            "{\"type\":\"user/message\",\"time\":1760000000002,\"data\":{\"id\":\"msg-u-1\",\"role\":\"user\","
                    + "\"source\":{\"kind\":\"user\"},\"content\":[{\"type\":\"text\",\"text\":\"hello\"}]},"
                    + "\"surfaceOp\":\"append\"}",
            "{\"type\":\"step/start\",\"time\":1760000000003,\"data\":{\"turn\":1,\"step\":1}}",
            "{\"type\":\"todo/write\",\"time\":1760000000004,\"data\":{\"todos\":[\"t1\"]}}",
            "{\"type\":\"step/end\",\"time\":1760000000005,\"data\":{\"turn\":1,\"step\":1}}");

    /** The resource listing the classes an evaluation's commands load, one binary name a line ({@code #}: comment). */
    static final String CLASS_LIST = "startup-classes.txt";

    private StartupTraining() {}

    public static void main(String[] args) {
        Environment environment = Environment.system();
        System.exit(run(environment, TemporaryDirectory.useVigiloHome(environment)));
    }

    /**
     * Runs the workload in a new directory under {@code scratch}, deleted afterwards; returns the exit code (0: it
     * ran as expected).
     */
    static int run(Environment environment, Path scratch) {
        Path directory;
        try {
            directory = Files.createTempDirectory(scratch, "startup-training-");
        } catch (IOException e) {
            return 1;
        }
        try {
            Cli.commandLine(new VigiloCommand(environment));
            Path log = directory.resolve("session.jsonl.zstd");
            List<ObjectNode> events = new ArrayList<>();
            for (String event : EVENTS) {
                events.add((ObjectNode) Json.read(event));
            }
            try (SessionLogWriter writer = SessionLogWriter.create(
                    log,
                    new SessionHeader("startup-training", directory.toString(), 1760000000000L, 0),
                    new LockFileEpochSource(),
                    WriterOptions.defaults())) {
                writer.append(events);
            }
            PrintWriter discard = new PrintWriter(OutputStream.nullOutputStream());
            if (Cli.run(environment, discard, discard, "session", "verify", log.toString()) != ExitCode.OK) {
                return 1;
            }
            preload(StartupTraining.class.getClassLoader());
            return 0;
        } catch (IOException | RuntimeException e) {
            return 1;
        } finally {
            delete(directory);
        }
    }

    /**
     * Loads every class of {@link #CLASS_LIST} that this build has, without running its static initializers (which
     * could start threads or touch files); returns how many were loaded. A name this build no longer has (the list
     * was recorded from an older one) only costs its place in the archive.
     */
    static int preload(ClassLoader loader) throws IOException {
        int loaded = 0;
        for (String name : classList()) {
            try {
                Class.forName(name, false, loader);
                loaded++;
            } catch (ClassNotFoundException | LinkageError | RuntimeException e) {
                // renamed, removed, or needs a class this build does not ship: not archived, loaded as before (one
                // such class must not cost the archive of all the others)
            }
        }
        return loaded;
    }

    /** The names of {@link #CLASS_LIST}. */
    static List<String> classList() throws IOException {
        try (var in = StartupTraining.class.getResourceAsStream(CLASS_LIST)) {
            if (in == null) {
                throw new IOException("resource " + CLASS_LIST + " is missing from the build");
            }
            return new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8)
                    .lines()
                    .map(String::strip)
                    .filter(l -> !l.isEmpty() && !l.startsWith("#"))
                    .toList();
        }
    }

    private static void delete(Path directory) {
        try (Stream<Path> paths = Files.walk(directory)) {
            for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        } catch (IOException | UncheckedIOException e) {
            // a leftover directory under Vigilo home's tmp/ is harmless
        }
    }
}
