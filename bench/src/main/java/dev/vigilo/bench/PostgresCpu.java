package dev.vigilo.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;

/**
 * CPU time used so far by an embedded PostgreSQL server: its postmaster's own time, the time of the backends it has
 * already reaped (the kernel adds an exited child's time to its parent) and that of its live children. Linux only
 * ({@code /proc}); {@link #millis} is empty elsewhere or when the server is not running.
 */
final class PostgresCpu {
    /** Clock ticks per second of {@code /proc/PID/stat} times ({@code getconf CLK_TCK}: 100 on Linux). */
    private static final long TICKS_PER_SECOND = 100;

    private final Path dataDirectory;

    /** @param dataDirectory the server's data directory (holds {@code postmaster.pid}) */
    PostgresCpu(Path dataDirectory) {
        this.dataDirectory = dataDirectory;
    }

    /** The server's CPU time so far, milliseconds. */
    Optional<Long> millis() {
        try {
            long pid = Long.parseLong(Files.readAllLines(dataDirectory.resolve("postmaster.pid"))
                    .get(0)
                    .trim());
            String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
            // fields after the parenthesised command name: state is field 3, utime..cstime are fields 14..17
            String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            long ticks = Long.parseLong(f[11]) + Long.parseLong(f[12]) + Long.parseLong(f[13]) + Long.parseLong(f[14]);
            long live = ProcessHandle.of(pid)
                    .map(p -> p.children()
                            .mapToLong(c -> c.info()
                                    .totalCpuDuration()
                                    .map(Duration::toMillis)
                                    .orElse(0L))
                            .sum())
                    .orElse(0L);
            return Optional.of(ticks * 1000 / TICKS_PER_SECOND + live);
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
    }
}
