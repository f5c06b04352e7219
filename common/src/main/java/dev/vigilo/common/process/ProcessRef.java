package dev.vigilo.common.process;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Optional;

/**
 * A process of this machine identified by its pid and start time, so that a recycled pid is not mistaken for the
 * process that once had it. Used wherever Vigilo records which process holds something (the embedded PostgreSQL's
 * clients and host, a run's creation lease) and later asks whether that process still runs.
 *
 * @param pid             the operating-system process id
 * @param startEpochMilli when the process started, or {@link #UNKNOWN_START} if the platform does not say
 */
public record ProcessRef(long pid, long startEpochMilli) {

    /** The start time of a process whose start the platform does not report. */
    public static final long UNKNOWN_START = -1;

    // Start times are derived from clock ticks since boot; two JVMs may round them differently.
    private static final long START_TOLERANCE_MILLIS = 1_000;

    public ProcessRef {
        if (pid <= 0) {
            throw new IllegalArgumentException("pid must be positive: " + pid);
        }
    }

    /** This process. */
    public static ProcessRef current() {
        return of(ProcessHandle.current());
    }

    /** {@code handle}'s process, with its start time where the platform reports it. */
    public static ProcessRef of(ProcessHandle handle) {
        return new ProcessRef(handle.pid(), startOf(handle).orElse(UNKNOWN_START));
    }

    /** @return whether this very process (same pid, same start time where known) is still running */
    public boolean isAlive() {
        Optional<ProcessHandle> handle = ProcessHandle.of(pid);
        if (handle.isEmpty() || !isRunning(handle.get())) {
            return false;
        }
        if (startEpochMilli == UNKNOWN_START) {
            return true;
        }
        return startOf(handle.get())
                .map(start -> Math.abs(start - startEpochMilli) <= START_TOLERANCE_MILLIS)
                .orElse(true);
    }

    /** @return whether process {@code pid} exists and is not a zombie */
    public static boolean isRunning(long pid) {
        return ProcessHandle.of(pid).map(ProcessRef::isRunning).orElse(false);
    }

    /**
     * {@link ProcessHandle#isAlive()} is also true for a zombie: a process that has exited but not yet been reaped
     * by its parent. Hosts and postmasters are reparented to PID 1 when their launcher exits, and a container's
     * PID 1 may reap late or never, so a zombie must count as dead here or a killed host would look alive forever.
     */
    public static boolean isRunning(ProcessHandle handle) {
        if (!handle.isAlive()) {
            return false;
        }
        Path stat = Path.of("/proc", Long.toString(handle.pid()), "stat");
        try {
            String content = Files.readString(stat);
            // "pid (command) S ...": the state letter follows the last ')' (the command may contain parentheses).
            int end = content.lastIndexOf(')');
            if (end < 0 || end + 2 >= content.length()) {
                return true;
            }
            char state = content.charAt(end + 2);
            return state != 'Z' && state != 'X' && state != 'x';
        } catch (NoSuchFileException e) {
            // Either no /proc (not Linux; trust isAlive) or the process has just gone.
            return !Files.isDirectory(Path.of("/proc/self")) && handle.isAlive();
        } catch (IOException e) {
            return handle.isAlive();
        }
    }

    private static Optional<Long> startOf(ProcessHandle handle) {
        return handle.info().startInstant().map(Instant::toEpochMilli);
    }
}
