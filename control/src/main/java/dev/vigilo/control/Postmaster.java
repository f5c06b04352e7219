package dev.vigilo.control;

import dev.vigilo.common.process.ProcessRef;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * The PostgreSQL postmaster of a data directory, as recorded in its {@code postmaster.pid}. Used to find and stop a
 * server whose host died (kill -9, OOM killer): pg_ctl detaches the postmaster, so it outlives its host.
 */
final class Postmaster {

    private Postmaster() {}

    /** @return the pid on the first line of {@code <dataDirectory>/postmaster.pid}, if the file exists and parses */
    static OptionalLong recordedPid(Path dataDirectory) {
        Path file = dataDirectory.resolve("postmaster.pid");
        if (!Files.isDirectory(dataDirectory)) {
            return OptionalLong.empty(); // nothing started here yet; a data "directory" that is a file fails on start
        }
        try {
            List<String> lines = Files.readAllLines(file);
            return lines.isEmpty()
                    ? OptionalLong.empty()
                    : OptionalLong.of(Long.parseLong(lines.get(0).trim()));
        } catch (NoSuchFileException e) {
            return OptionalLong.empty();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file, e);
        } catch (NumberFormatException e) {
            return OptionalLong.empty();
        }
    }

    /** @return the live postmaster process recorded for {@code dataDirectory}, if there is one */
    static Optional<ProcessHandle> running(Path dataDirectory) {
        OptionalLong pid = recordedPid(dataDirectory);
        if (pid.isEmpty()) {
            return Optional.empty();
        }
        return ProcessHandle.of(pid.getAsLong()).filter(ProcessRef::isRunning).filter(Postmaster::looksLikePostgres);
    }

    /**
     * Makes {@code dataDirectory} startable after its host died: stops a postmaster that outlived the host, and
     * removes a {@code postmaster.pid} that PostgreSQL would wrongly take as a live server's.
     *
     * <p>A running postmaster is {@linkplain #stop stopped}. A postmaster.pid naming a dead pid is left to
     * PostgreSQL, which removes it itself. One naming a zombie (a killed postmaster not yet reaped by PID 1, common
     * in containers) or an unrelated process makes PostgreSQL refuse to start, so it is removed - once no process is
     * left working in the data directory, which is the interlock PostgreSQL's own check stands for.
     *
     * @return the pid that was stopped, if any
     * @throws IllegalStateException if a postmaster or its leftover processes are still running after {@code timeout}
     */
    static OptionalLong clearOrphan(Path dataDirectory, Duration timeout) throws InterruptedException {
        OptionalLong recorded = recordedPid(dataDirectory);
        if (recorded.isEmpty()) {
            return OptionalLong.empty();
        }
        long deadline = System.nanoTime() + timeout.toNanos();
        Optional<ProcessHandle> running = running(dataDirectory);
        if (running.isPresent()) {
            stop(running.get(), timeout);
        }
        // After a clean stop PostgreSQL has removed the file; what is left names a process that is not a postmaster.
        OptionalLong left = recordedPid(dataDirectory);
        if (left.isPresent()
                && ProcessHandle.of(left.getAsLong())
                        .map(ProcessHandle::isAlive)
                        .orElse(false)) {
            awaitNoProcessIn(dataDirectory, deadline);
            deleteQuietly(dataDirectory.resolve("postmaster.pid"));
        }
        return running.isPresent() ? OptionalLong.of(running.get().pid()) : OptionalLong.empty();
    }

    /**
     * Stops a postmaster by signal: SIGINT (PostgreSQL's "fast" shutdown: abort sessions, checkpoint, remove
     * postmaster.pid, exit), then SIGQUIT ("immediate": crash recovery on next start) if that has not worked within
     * half of {@code timeout}.
     *
     * @throws IllegalStateException if it is still running after {@code timeout}
     */
    static void stop(ProcessHandle postmaster, Duration timeout) throws InterruptedException {
        long halfMillis = Math.max(1, timeout.toMillis() / 2);
        signal(postmaster.pid(), "INT");
        if (!awaitExit(postmaster, halfMillis)) {
            signal(postmaster.pid(), "QUIT");
            if (!awaitExit(postmaster, halfMillis)) {
                throw new IllegalStateException("PostgreSQL (pid " + postmaster.pid() + ") did not stop within "
                        + timeout.toSeconds() + " s; stop it (kill " + postmaster.pid() + ") and retry");
            }
        }
    }

    /** Waits until no running process (a postmaster's backend, say) has {@code dataDirectory} as working directory. */
    private static void awaitNoProcessIn(Path dataDirectory, long deadline) throws InterruptedException {
        while (true) {
            List<Long> working = processesWorkingIn(dataDirectory);
            if (working.isEmpty()) {
                return;
            }
            if (System.nanoTime() - deadline >= 0) {
                throw new IllegalStateException("processes " + working + " of an earlier PostgreSQL still run in "
                        + dataDirectory + "; stop them and retry");
            }
            Thread.sleep(50);
        }
    }

    private static List<Long> processesWorkingIn(Path dataDirectory) {
        Path target;
        try {
            target = dataDirectory.toRealPath();
        } catch (IOException e) {
            return List.of();
        }
        try (Stream<Path> entries = Files.list(Path.of("/proc"))) {
            return entries.map(entry -> entry.getFileName().toString())
                    .filter(name -> name.chars().allMatch(Character::isDigit))
                    .map(Long::valueOf)
                    .filter(pid -> isWorkingIn(pid, target))
                    .filter(ProcessRef::isRunning)
                    .collect(Collectors.toList());
        } catch (IOException | UncheckedIOException e) {
            return List.of(); // no /proc: nothing to check, PostgreSQL's own checks remain
        }
    }

    private static boolean isWorkingIn(long pid, Path directory) {
        try {
            return Files.readSymbolicLink(Path.of("/proc", Long.toString(pid), "cwd"))
                    .equals(directory);
        } catch (IOException | UnsupportedOperationException e) {
            return false; // gone, or another user's process
        }
    }

    private static boolean looksLikePostgres(ProcessHandle handle) {
        // When the command is not visible (another user's process), assume it is the postmaster: stopping is
        // attempted, and PostgreSQL itself refuses to start over a live postmaster, so nothing is corrupted.
        return handle.info()
                .command()
                .map(command -> command.endsWith("/postgres") || command.endsWith("postgres.exe"))
                .orElse(true);
    }

    private static boolean awaitExit(ProcessHandle handle, long millis) throws InterruptedException {
        long deadline = System.nanoTime() + millis * 1_000_000;
        while (ProcessRef.isRunning(handle)) {
            if (System.nanoTime() - deadline >= 0) {
                return false;
            }
            Thread.sleep(50);
        }
        return true;
    }

    private static void signal(long pid, String signal) throws InterruptedException {
        // Java can only send SIGTERM and SIGKILL; PostgreSQL treats SIGTERM as "smart" shutdown, which waits for
        // every session to end - possibly forever - so use kill(1) for the faster modes.
        try {
            Process kill = new ProcessBuilder("kill", "-s", signal, Long.toString(pid))
                    .redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                    .start();
            kill.waitFor();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot run kill -s " + signal + " " + pid, e);
        }
    }

    private static void deleteQuietly(Path file) {
        try {
            Files.deleteIfExists(file);
        } catch (IOException ignored) {
            // PostgreSQL will report the problem with a clear message on start
        }
    }
}
