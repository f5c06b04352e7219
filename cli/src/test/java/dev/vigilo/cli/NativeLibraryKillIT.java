package dev.vigilo.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * kill -9 of a real {@code vigilo datagen run} (the packaged jar, no {@code java.io.tmpdir} given) leaves nothing in
 * the system temporary directory and does not make Vigilo home grow: the native libraries Lance and Arrow unpack go
 * to {@code $VIGILO_HOME/tmp}, a process removes its own copies once they are loaded, and a copy left by a kill
 * during the unpacking is removed by the next process.
 */
class NativeLibraryKillIT {
    private static final Path SYSTEM_TMP = Path.of("/tmp");
    // The JVM's own performance-data file (hsperfdata_<user>/<pid>): the next JVM of the user removes a dead one.
    private static final String JVM_PERF_DATA = "hsperfdata_";

    @TempDir
    Path dir;

    @Test
    void killedDatagenRunsLeaveNoNativeLibraryCopies() throws Exception {
        assumeTrue(Files.isDirectory(Path.of("/proc/self")), "needs /proc to see what the child maps and opens");
        Path home = dir.resolve("home");
        Path yaml = pipeline(24);
        Path tmp = home.resolve("tmp");
        String[] run = {"datagen", "run", yaml.toString(), "--experiment", "kills", "--workers", "2"};

        // 1. Killed while Lance unpacks its library: a partial copy in Vigilo home, nothing in /tmp.
        Process p = start(home, List.of(), run);
        String partial = null;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (partial == null && p.isAlive() && System.nanoTime() < deadline) {
            partial = copies(tmp).stream().findFirst().orElse(null);
            if (partial == null) {
                Thread.sleep(2);
            }
        }
        Set<Path> outside = outsideTestDirectory(p.pid());
        p.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
        assertThat(partial)
                .as("the child unpacked its library into VIGILO_HOME/tmp")
                .isNotNull();
        assertThat(copies(tmp)).as("the kill left the partial copy").contains(partial);
        assertNothingLeft(outside);

        // 2. Killed while it works, three times: its copies were unlinked once loaded, so nothing is left; the
        //    first of these also removed the partial copy of step 1.
        for (int round = 0; round < 3; round++) {
            p = start(home, List.of(), run);
            awaitItemFinished(p);
            List<String> mapped = mappedCopies(p.pid());
            assertThat(mapped)
                    .as("round %d: the libraries are mapped from VIGILO_HOME/tmp, their files already removed", round)
                    .hasSize(2)
                    .allSatisfy(line ->
                            assertThat(line).startsWith(tmp.toRealPath() + "/").endsWith(" (deleted)"));
            assertThat(copies(tmp))
                    .as("round %d: no copy on disk while the run works", round)
                    .isEmpty();
            outside = outsideTestDirectory(p.pid());
            p.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
            assertNothingLeft(outside);
            assertThat(copies(tmp))
                    .as("round %d: nothing left after the kill", round)
                    .isEmpty();
        }

        // 3. A java.io.tmpdir given on the command line is honoured.
        Path own = Files.createDirectories(dir.resolve("own-tmp"));
        p = start(home, List.of("-Djava.io.tmpdir=" + own), run);
        awaitItemFinished(p);
        assertThat(mappedCopies(p.pid()))
                .hasSize(2)
                .allSatisfy(line -> assertThat(line).startsWith(own.toRealPath() + "/"));
        p.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
        assertThat(copies(own)).isEmpty();

        // 4. The same command finishes; Vigilo home holds no copy and its tmp directory only the lock file.
        VigiloProcess.Result done = VigiloProcess.run(home, Map.of(), List.of(), 180, run);
        assertThat(done.exitCode()).as(done.err()).isZero();
        assertThat(done.out()).contains("\"completed\":24");
        try (Stream<Path> left = Files.list(tmp)) {
            assertThat(left.map(f -> f.getFileName().toString())).containsExactly(".vigilo-native.lock");
        }
    }

    private Path pipeline(int items) throws IOException {
        StringBuilder seeds = new StringBuilder();
        for (int i = 0; i < items; i++) {
            seeds.append("{\"id\": \"s").append(i).append("\"}\n");
        }
        Files.writeString(dir.resolve("seeds.jsonl"), seeds);
        return Files.writeString(dir.resolve("slow.yaml"), """
                name: slow
                input: seeds.jsonl
                id_field: id
                steps:
                  - name: one
                    kind: command
                    command: 'cat > /dev/null; sleep 0.3; echo "{\\"a\\": 1}"'
                """);
    }

    private static Process start(Path home, List<String> jvm, String... args) throws IOException {
        return VigiloProcess.builder(home, Map.of(), jvm, args)
                .redirectError(ProcessBuilder.Redirect.DISCARD)
                .start();
    }

    private static void awaitItemFinished(Process p) throws IOException {
        BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        String line;
        while ((line = out.readLine()) != null) {
            if (line.contains("item_finished")) {
                return;
            }
        }
        throw new AssertionError("the run ended before finishing an item");
    }

    private static List<String> copies(Path directory) throws IOException {
        List<String> names = new ArrayList<>();
        if (!Files.isDirectory(directory)) {
            return names;
        }
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(directory)) {
            for (Path entry : entries) {
                String name = entry.getFileName().toString();
                if (name.startsWith("liblance_jni") || name.startsWith("jnilib-")) {
                    names.add(name);
                }
            }
        }
        return names;
    }

    /** The lines of the child's memory map that name a library copy: "PATH" or "PATH (deleted)". */
    private static List<String> mappedCopies(long pid) throws IOException {
        try (Stream<String> lines = Files.lines(Path.of("/proc", Long.toString(pid), "maps"))) {
            return lines.map(l -> l.indexOf('/') < 0 ? "" : l.substring(l.indexOf('/')))
                    .filter(path -> path.contains("/liblance_jni") || path.contains("/jnilib-"))
                    .distinct()
                    .toList();
        }
    }

    /**
     * The files in the system temporary directory the child maps or holds open, outside this test's directory (which
     * holds Vigilo home and the pipeline), the JVM's own performance-data file excepted.
     */
    private Set<Path> outsideTestDirectory(long pid) throws IOException {
        Path testDirectory = dir.toRealPath();
        Set<Path> files = new TreeSet<>();
        Path proc = Path.of("/proc", Long.toString(pid));
        try (Stream<String> lines = Files.lines(proc.resolve("maps"))) {
            lines.filter(l -> l.indexOf('/') >= 0)
                    .map(l -> l.substring(l.indexOf('/')).replace(" (deleted)", ""))
                    .forEach(path -> files.add(Path.of(path)));
        }
        try (DirectoryStream<Path> fds = Files.newDirectoryStream(proc.resolve("fd"))) {
            for (Path fd : fds) {
                try {
                    files.add(Path.of(Files.readSymbolicLink(fd).toString().replace(" (deleted)", "")));
                } catch (IOException e) {
                    // closed meanwhile
                }
            }
        } catch (UncheckedIOException e) {
            throw e.getCause();
        }
        // The child's own class path (the checkout's target/lib) is not a copy it made, wherever the checkout is,
        // /tmp included.
        Path checkout = Path.of("").toAbsolutePath().getParent();
        files.removeIf(f -> !f.startsWith(SYSTEM_TMP)
                || f.startsWith(testDirectory)
                || (checkout != null && f.startsWith(checkout) && f.toString().endsWith(".jar"))
                || f.toString().contains("/" + JVM_PERF_DATA));
        return files;
    }

    private static void assertNothingLeft(Set<Path> outside) {
        assertThat(outside.stream().filter(Files::exists))
                .as("files the killed child used in %s outside Vigilo home", SYSTEM_TMP)
                .isEmpty();
    }
}
