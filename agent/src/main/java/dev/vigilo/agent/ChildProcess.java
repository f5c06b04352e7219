package dev.vigilo.agent;

import dev.vigilo.common.concurrent.Threads;
import dev.vigilo.common.errors.SecretValues;
import dev.vigilo.common.process.ProcessTree;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Runs one child process to completion: feeds it stdin, reads stdout up to a limit and keeps only the tail of
 * stderr (memory stays bounded whatever the child prints), and ends it when it runs past its deadline, prints too
 * much, or the calling thread is interrupted. However it ended, everything the run started is then killed
 * ({@link ProcessTree}: descendants, and processes that left the session but carry the run's tag). Stateless; each
 * run uses three short-lived I/O threads so a child that neither reads stdin nor closes stdout cannot block the
 * caller past the deadline.
 */
final class ChildProcess {
    /** How much of stderr is kept for messages. */
    static final int STDERR_TAIL_BYTES = 2048;

    private static final long DRAIN_AFTER_KILL_MS = 1_000;

    private ChildProcess() {}

    /** How the run ended. */
    enum Ending {
        /** The process exited by itself and stdout was read to its end. */
        EXITED,
        /** The program could not be started. */
        NOT_STARTED,
        /** The deadline passed (the process, or something holding its stdout open, was still running). */
        TIMED_OUT,
        /** stdout went past its limit. */
        STDOUT_OVERFLOW,
        /** The calling thread was interrupted; its interrupt status is set again. */
        CANCELLED
    }

    /**
     * What to run.
     *
     * @param argv        program and arguments (the program is looked up on this process's PATH)
     * @param environment the child's whole environment
     * @param directory   its working directory
     * @param stdin       written to its stdin, which is then closed
     * @param timeout     deadline from the start
     * @param stdoutLimit the most stdout bytes kept; one more ends the run with {@link Ending#STDOUT_OVERFLOW}
     * @param secrets     masked in the stderr tail (the child inherits them and may print them), where the tail is cut
     *                    too, so no part of one is left at its start
     */
    record Spec(
            List<String> argv,
            Map<String, String> environment,
            Path directory,
            byte[] stdin,
            Duration timeout,
            int stdoutLimit,
            SecretValues secrets) {
        Spec {
            argv = List.copyOf(argv);
            environment = Map.copyOf(environment);
            Objects.requireNonNull(directory, "directory");
            Objects.requireNonNull(stdin, "stdin");
            Objects.requireNonNull(timeout, "timeout");
            Objects.requireNonNull(secrets, "secrets");
        }
    }

    /**
     * What happened.
     *
     * @param ending       how it ended
     * @param exitCode     the exit status when {@link Ending#EXITED}, else -1
     * @param stdout       what was read from stdout (at most the limit)
     * @param stderrTail   the last {@link #STDERR_TAIL_BYTES} of stderr, decoded leniently, the secrets masked
     * @param elapsed      from start to end
     * @param startProblem why the program could not be started ({@link Ending#NOT_STARTED} only)
     * @param exited       whether the process itself had exited by the end (for {@link Ending#TIMED_OUT}: something
     *                     it left behind held stdout open)
     */
    record Result(
            Ending ending,
            int exitCode,
            byte[] stdout,
            String stderrTail,
            Duration elapsed,
            String startProblem,
            boolean exited) {}

    static Result run(Spec spec) {
        long start = System.nanoTime();
        long deadline = start + spec.timeout().toNanos();
        ProcessBuilder builder =
                new ProcessBuilder(spec.argv()).directory(spec.directory().toFile());
        builder.environment().clear();
        builder.environment().putAll(spec.environment());
        ProcessTree tree = ProcessTree.tag(builder.environment());
        Process process;
        try {
            process = builder.start();
        } catch (IOException e) {
            return new Result(Ending.NOT_STARTED, -1, new byte[0], "", since(start), startProblem(e), false);
        }
        StdoutReader out = new StdoutReader(process.getInputStream(), spec.stdoutLimit());
        TailReader err = new TailReader(process.getErrorStream());
        Threads.startDaemon("child-stdin", () -> feed(process.getOutputStream(), spec.stdin()));
        Thread outThread = Threads.startDaemon("child-stdout", out);
        Thread errThread = Threads.startDaemon("child-stderr", err);
        Ending ending;
        try {
            CompletableFuture.anyOf(process.onExit(), out.overflow).get(remaining(deadline), TimeUnit.NANOSECONDS);
            if (out.overflow.isDone()) {
                ending = Ending.STDOUT_OVERFLOW;
            } else {
                // Exited; stdout may still hold unread bytes (or be held open by a leftover grandchild).
                outThread.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(remaining(deadline))));
                // stderr gets a short grace only: a leftover grandchild may hold it open for long.
                errThread.join(
                        Math.max(1, Math.min(DRAIN_AFTER_KILL_MS, TimeUnit.NANOSECONDS.toMillis(remaining(deadline)))));
                if (out.overflow.isDone()) {
                    ending = Ending.STDOUT_OVERFLOW;
                } else {
                    ending = outThread.isAlive() ? Ending.TIMED_OUT : Ending.EXITED;
                }
            }
        } catch (TimeoutException e) {
            ending = Ending.TIMED_OUT;
        } catch (InterruptedException e) {
            ending = Ending.CANCELLED;
        } catch (ExecutionException e) {
            throw new IllegalStateException("waiting for a child process failed", e);
        }
        boolean exited = !process.isAlive();
        int exitCode = ending == Ending.EXITED ? process.exitValue() : -1;
        // Whatever the ending, nothing the run started outlives it: the process, its descendants, and what left
        // them (setsid, double fork) but still carries the run's tag (docs/formats/agent-protocol.md).
        tree.reap(Optional.of(process.toHandle()));
        if (ending != Ending.EXITED) {
            joinQuietly(errThread);
        }
        closeQuietly(process);
        if (ending == Ending.CANCELLED) {
            Thread.currentThread().interrupt();
        }
        return new Result(ending, exitCode, out.bytes(), err.tail(spec.secrets()), since(start), null, exited);
    }

    private static String startProblem(IOException e) {
        // "Cannot run program "x": error=2, No such file or directory" -> "No such file or directory"
        String m = e.getMessage() == null ? e.toString() : e.getMessage();
        int i = m.lastIndexOf(", ");
        return Texts.oneLine(i >= 0 && m.contains("error=") ? m.substring(i + 2) : m, 200);
    }

    private static void feed(OutputStream stdin, byte[] bytes) {
        try (stdin) {
            stdin.write(bytes);
        } catch (IOException e) {
            // The child closed stdin or exited without reading it: that is its choice, not a failure.
        }
    }

    private static void joinQuietly(Thread t) {
        boolean interrupted = Thread.interrupted();
        try {
            t.join(DRAIN_AFTER_KILL_MS);
        } catch (InterruptedException e) {
            interrupted = true;
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private static void closeQuietly(Process p) {
        for (AutoCloseable c : new AutoCloseable[] {p.getOutputStream(), p.getInputStream(), p.getErrorStream()}) {
            try {
                c.close();
            } catch (Exception e) {
                // Best effort: the descriptors go with the process object anyway.
            }
        }
    }

    private static long remaining(long deadline) {
        return Math.max(0, deadline - System.nanoTime());
    }

    private static Duration since(long start) {
        return Duration.ofNanos(System.nanoTime() - start);
    }

    /** Reads stdout up to a limit; completes {@link #overflow} when one byte more arrives. */
    private static final class StdoutReader implements Runnable {
        final CompletableFuture<Void> overflow = new CompletableFuture<>();
        private final InputStream in;
        private final int limit;
        private volatile byte[] bytes = new byte[0];

        StdoutReader(InputStream in, int limit) {
            this.in = in;
            this.limit = limit;
        }

        @Override
        public void run() {
            try {
                byte[] b = in.readNBytes(limit + 1);
                if (b.length > limit) {
                    bytes = Arrays.copyOf(b, limit);
                    overflow.complete(null);
                } else {
                    bytes = b;
                }
            } catch (IOException e) {
                // The stream was closed under us (the process was killed): keep what was read.
            }
        }

        byte[] bytes() {
            return bytes;
        }
    }

    /** Reads stderr to its end, keeping only the last {@link #STDERR_TAIL_BYTES}. */
    private static final class TailReader implements Runnable {
        private final InputStream in;
        private final byte[] ring = new byte[STDERR_TAIL_BYTES];
        private long total;

        TailReader(InputStream in) {
            this.in = in;
        }

        @Override
        public void run() {
            byte[] buf = new byte[8192];
            try {
                for (int n; (n = in.read(buf)) >= 0; ) {
                    synchronized (this) {
                        for (int i = 0; i < n; i++) {
                            ring[(int) (total++ % ring.length)] = buf[i];
                        }
                    }
                }
            } catch (IOException e) {
                // Closed under us after a kill: the tail so far is what we have.
            }
        }

        /** The tail with {@code secrets} masked, also a part of one left where the tail starts inside it. */
        synchronized String tail(SecretValues secrets) {
            int size = (int) Math.min(total, ring.length);
            byte[] out = new byte[size];
            long from = total - size;
            for (int i = 0; i < size; i++) {
                out[i] = ring[(int) ((from + i) % ring.length)];
            }
            int start = 0;
            // A cut inside a character: its continuation bytes go, so the text starts at a whole character.
            while (from > 0 && start < size && (out[start] & 0xc0) == 0x80) {
                start++;
            }
            return secrets.maskCut(new String(out, start, size - start, StandardCharsets.UTF_8), from > 0, false);
        }
    }
}
