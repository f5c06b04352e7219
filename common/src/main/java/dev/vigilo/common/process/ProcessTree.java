package dev.vigilo.common.process;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * Everything one run of a child command started (an agent attempt, an evaluation, a pipeline step), found again
 * and killed when the run ends, including what escaped the usual ways of keeping track: a grandchild that called
 * {@code setsid()} (it left the process group and the session, so a group kill misses it) and was reparented to
 * init when its parent exited (so it is no longer a descendant).
 *
 * <p>How: before the child starts, {@link #tag} adds a random 128-bit token to its environment in the variable
 * {@value #VARIABLE}; every process it starts inherits the variable unless it deliberately replaces its environment.
 * {@link #reap} kills the child and its descendants, then scans {@code /proc/<pid>/environ} of every process this
 * user may read for the token, kills each match with SIGKILL and scans again, until a scan finds none (the approach
 * of Jenkins' ProcessTreeKiller). The token is appended to an inherited value ({@code outer:inner}), so when a
 * tagged command runs Vigilo, the outer run's reap still finds the inner run's processes.
 *
 * <p>Limits: a process that starts a program with an emptied or rewritten environment ({@code env -i},
 * {@code execve} with a new environment) is found only while it is still a descendant; without {@code /proc} (not
 * Linux) only descendants are killed. Process ids are re-read through {@link ProcessHandle}, whose kill checks the
 * start time, so a reused pid is never killed. Thread-safe; each instance belongs to one run.
 */
public final class ProcessTree {
    /** The environment variable that marks a run's processes. */
    public static final String VARIABLE = "VIGILO_PROCESS_TAG";

    private static final Path PROC = Path.of("/proc");
    private static final byte[] PREFIX = (VARIABLE + "=").getBytes(StandardCharsets.US_ASCII);
    private static final SecureRandom RANDOM = new SecureRandom();
    /** Enough for a tree that forks while it is being killed; each round kills every process it found. */
    private static final int MAX_ROUNDS = 50;
    /** How long one round waits for the processes it killed to be gone before scanning again. */
    private static final long ROUND_WAIT_MS = 2_000;

    private final String token;

    private ProcessTree(String token) {
        this.token = token;
    }

    /**
     * A new tree: adds its token to {@code environment} (the child's whole environment, as a
     * {@link ProcessBuilder#environment()} map), after any token the map already carries.
     */
    public static ProcessTree tag(Map<String, String> environment) {
        Objects.requireNonNull(environment, "environment");
        byte[] bytes = new byte[16];
        RANDOM.nextBytes(bytes);
        String token = HexFormat.of().formatHex(bytes);
        String inherited = environment.get(VARIABLE);
        environment.put(VARIABLE, inherited == null || inherited.isBlank() ? token : inherited + ":" + token);
        return new ProcessTree(token);
    }

    /** The token in {@value #VARIABLE} that marks this tree's processes. */
    public String token() {
        return token;
    }

    /**
     * Kills {@code root} (when given) with its descendants and every live process that carries this tree's token,
     * until none is left; waits (bounded) for each to be gone. Safe to call more than once, and after {@code root}
     * exited by itself. Preserves the calling thread's interrupt status but is not cut short by it: leaving
     * processes behind is what this exists to prevent.
     *
     * @return how many processes it killed (the root included when it was still running)
     */
    public int reap(Optional<ProcessHandle> root) {
        Objects.requireNonNull(root, "root");
        boolean interrupted = Thread.interrupted();
        try {
            int killed = 0;
            List<ProcessHandle> first = new ArrayList<>();
            root.ifPresent(r -> {
                first.add(r);
                r.descendants().forEach(first::add);
            });
            List<ProcessHandle> found = first;
            for (int round = 0; round < MAX_ROUNDS; round++) {
                found.addAll(tagged());
                List<ProcessHandle> alive = new ArrayList<>();
                for (ProcessHandle p : found) {
                    if (!isGone(p) && p.destroyForcibly()) {
                        alive.add(p);
                    }
                }
                if (alive.isEmpty()) {
                    return killed;
                }
                killed += alive.size();
                awaitGone(alive);
                found = new ArrayList<>();
            }
            return killed;
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** The live processes whose environment carries the token (empty without {@code /proc}). */
    List<ProcessHandle> tagged() {
        List<ProcessHandle> found = new ArrayList<>();
        long self = ProcessHandle.current().pid();
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(PROC)) {
            for (Path entry : entries) {
                long pid = pid(entry.getFileName().toString());
                if (pid <= 0 || pid == self) {
                    continue;
                }
                if (carriesToken(pid)) {
                    // The handle records the process's start time, and its kill checks it: a pid reused after
                    // this point is not killed. Read the environment again to be sure the handle's process is
                    // the tagged one.
                    ProcessHandle.of(pid).filter(h -> carriesToken(pid)).ifPresent(found::add);
                }
            }
        } catch (IOException | RuntimeException e) {
            // No /proc (not Linux) or it vanished under us: only the descendants found by the caller are killed.
        }
        return found;
    }

    private boolean carriesToken(long pid) {
        byte[] environ;
        try {
            environ = Files.readAllBytes(PROC.resolve(Long.toString(pid)).resolve("environ"));
        } catch (IOException e) {
            return false; // gone, or another user's process
        }
        int start = 0;
        for (int i = 0; i <= environ.length; i++) {
            if (i == environ.length || environ[i] == 0) {
                if (startsWith(environ, start, i, PREFIX)
                        && containsToken(new String(
                                environ, start + PREFIX.length, i - start - PREFIX.length, StandardCharsets.UTF_8))) {
                    return true;
                }
                start = i + 1;
            }
        }
        return false;
    }

    private boolean containsToken(String value) {
        for (String t : value.split(":")) {
            if (t.equals(token)) {
                return true;
            }
        }
        return false;
    }

    private static boolean startsWith(byte[] bytes, int from, int to, byte[] prefix) {
        if (to - from < prefix.length) {
            return false;
        }
        for (int i = 0; i < prefix.length; i++) {
            if (bytes[from + i] != prefix[i]) {
                return false;
            }
        }
        return true;
    }

    private static long pid(String name) {
        if (name.isEmpty() || name.length() > 10) {
            return -1;
        }
        for (int i = 0; i < name.length(); i++) {
            if (name.charAt(i) < '0' || name.charAt(i) > '9') {
                return -1;
            }
        }
        return Long.parseLong(name);
    }

    /**
     * Waits until each process is gone or a zombie (dead, waiting only for its parent to collect it), at most
     * {@value #ROUND_WAIT_MS} ms in all: SIGKILL is delivered at once, but a process in uninterruptible sleep dies
     * when it wakes.
     */
    private static void awaitGone(List<ProcessHandle> killed) {
        long deadline = System.nanoTime() + ROUND_WAIT_MS * 1_000_000;
        for (ProcessHandle p : killed) {
            while (!isGone(p) && System.nanoTime() < deadline) {
                try {
                    Thread.sleep(5);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }
    }

    /** Whether {@code p} has ended: no longer alive, or a zombie (per {@code /proc/<pid>/stat}). */
    static boolean isGone(ProcessHandle p) {
        if (!p.isAlive()) {
            return true;
        }
        try {
            String stat = Files.readString(PROC.resolve(Long.toString(p.pid())).resolve("stat"));
            // "pid (comm) S ...": the state follows the last ')', since comm may contain anything.
            int close = stat.lastIndexOf(')');
            return close > 0 && close + 2 < stat.length() && stat.charAt(close + 2) == 'Z';
        } catch (IOException | RuntimeException e) {
            return true; // no stat any more: gone
        }
    }
}
