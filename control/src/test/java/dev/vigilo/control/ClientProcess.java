package dev.vigilo.control;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/** An {@link EmbeddedClientMain} running in its own JVM, as a Vigilo command would; its output is read line by line. */
final class ClientProcess implements AutoCloseable {

    private final Process process;
    private final LinkedBlockingQueue<String> lines = new LinkedBlockingQueue<>();
    private final List<String> transcript = new ArrayList<>();
    private final CountDownLatch outputClosed = new CountDownLatch(1);

    private ClientProcess(Process process) {
        this.process = process;
        Thread reader = new Thread(this::pump, "client-" + process.pid() + "-stdout");
        reader.setDaemon(true);
        reader.start();
    }

    static ClientProcess start(Path directory, Duration idleGrace, String... command) throws IOException {
        List<String> arguments = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-XX:+UseSerialGC",
                "-XX:TieredStopAtLevel=1",
                "-D" + EmbeddedOptions.IDLE_GRACE_PROPERTY + "=" + idleGrace.toMillis(),
                // Same place for the unpacked PostgreSQL binaries as this JVM (and its own servers) uses.
                "-Djava.io.tmpdir=" + System.getProperty("java.io.tmpdir"),
                "-cp",
                System.getProperty("java.class.path"),
                EmbeddedClientMain.class.getName(),
                directory.toString()));
        arguments.addAll(List.of(command));
        return new ClientProcess(
                new ProcessBuilder(arguments).redirectErrorStream(true).start());
    }

    private void pump() {
        try (BufferedReader reader =
                new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = reader.readLine()) != null) {
                synchronized (transcript) {
                    transcript.add(line);
                }
                lines.add(line);
            }
        } catch (IOException e) {
            lines.add("IOException " + e);
        } finally {
            outputClosed.countDown();
        }
    }

    /** @return the first line starting with {@code prefix}, skipping others; fails on timeout or an ERROR line */
    String awaitLine(String prefix, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            String line = lines.poll(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            if (line == null) {
                throw new AssertionError(
                        "no line starting with '" + prefix + "' within " + timeout + "; output:\n" + transcript());
            }
            if (line.startsWith(prefix)) {
                return line;
            }
            if (line.startsWith("ERROR")) {
                throw new AssertionError("client failed: " + line + "\noutput:\n" + transcript());
            }
        }
    }

    /**
     * Asks a "serve" client to query its database until it answers {@code OK} (its pool reconnects once a server is
     * back), at most until {@code timeout}; returns that line.
     */
    String queryUntilOk(Duration timeout) throws InterruptedException, IOException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            process.getOutputStream().write('\n');
            process.getOutputStream().flush();
            String line = lines.poll(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            if (line != null && line.startsWith("OK")) {
                return line;
            }
            if (line == null || System.nanoTime() - deadline >= 0) {
                throw new AssertionError("no OK within " + timeout + "; output:\n" + transcript());
            }
        }
    }

    /** Closes the client's stdin, which ends a "hold", and waits for it to exit. */
    int finish(Duration timeout) throws InterruptedException, IOException {
        process.getOutputStream().close();
        if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
            throw new AssertionError("client did not exit within " + timeout + "; output:\n" + transcript());
        }
        return process.exitValue();
    }

    /** @return whether the client's stdout reached end-of-file (nothing else, such as a server host, holds it) */
    boolean outputClosedWithin(Duration timeout) throws InterruptedException {
        return outputClosed.await(timeout.toMillis(), TimeUnit.MILLISECONDS);
    }

    void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(10, TimeUnit.SECONDS);
    }

    String transcript() {
        synchronized (transcript) {
            return String.join("\n", transcript);
        }
    }

    /** Kills the client if it is still running (a test that failed half-way). */
    @Override
    public void close() {
        if (process.isAlive()) {
            process.destroyForcibly();
        }
    }

    /** "READY port=5432 postmasterStart=123" -> the value of {@code key}. */
    static long field(String line, String key) {
        for (String part : line.split(" ")) {
            if (part.startsWith(key + "=")) {
                return Long.parseLong(part.substring(key.length() + 1));
            }
        }
        throw new AssertionError("no " + key + " in " + line);
    }
}
