package dev.vigilo.common.crash;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * Test harness for random {@code kill -9} tests: how many kills a run makes ({@value #POINTS}{@code =N}, else the
 * test's default), the seed of their random moments (printed; {@value CrashSweep#SEED}{@code =S} repeats it), and the
 * small pieces every such test needs: waiting (by polling) until a child process has started its real work, killing
 * it with SIGKILL and telling whether the signal ended it, and running independent kill sequences in parallel.
 *
 * <p>A kill lands at a random moment of the work: a test measures an uninterrupted run from the start of its work to
 * its end, waits until a child's work has started, then kills it after a delay drawn across that measured duration.
 * A child that ends before its kill was not killed; tests count only real kills.
 */
public final class RandomKills {
    /** System property: kills per run of a test (its default otherwise). */
    public static final String POINTS = "vigilo.kill.points";

    /** The exit value of a process ended by SIGKILL (128 + 9). */
    public static final int KILLED = 137;

    private static final long POLL_MILLIS = 10;

    private final String test;
    private final int points;
    private final long seed;

    private RandomKills(String test, int points, long seed) {
        this.test = test;
        this.points = points;
        this.seed = seed;
    }

    /** The kills of {@code test}: {@value #POINTS} or {@code defaultPoints}, with a seed; prints both. */
    public static RandomKills configure(String test, int defaultPoints) {
        RandomKills kills = new RandomKills(
                test, Integer.getInteger(POINTS, defaultPoints), Long.getLong(CrashSweep.SEED, System.nanoTime()));
        System.out.println(kills);
        return kills;
    }

    /** How many kills this run makes. */
    public int points() {
        return points;
    }

    /** The seed of this run's random choices. */
    public long seed() {
        return seed;
    }

    /** The kills of lane {@code lane} of {@code lanes} (the points spread as evenly as they go). */
    public int share(int lane, int lanes) {
        return points / lanes + (lane < points % lanes ? 1 : 0);
    }

    /** The random source of one lane: fixed by the seed and the lane. */
    public Random random(int lane) {
        return new Random(seed * 1_000_003L + lane);
    }

    @Override
    public String toString() {
        return test + ": " + points + " kill points, seed " + seed + " (-D" + CrashSweep.SEED + "=" + seed
                + " repeats it, -D" + POINTS + "=N makes N kills)";
    }

    /** The command prefix of a child JVM: this JVM's java, {@link CrashSweep#FAST_START}, then {@code options}. */
    public static List<String> java(List<String> options) {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(CrashSweep.FAST_START);
        command.addAll(options);
        return command;
    }

    /**
     * Polls {@code condition} until it holds (true) or {@code p} has ended (false); fails after {@code timeout}.
     */
    public static boolean awaitWhileAlive(Process p, Duration timeout, String what, BooleanSupplier condition)
            throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            if (condition.getAsBoolean()) {
                return true;
            }
            if (!p.isAlive()) {
                return condition.getAsBoolean();
            }
            if (System.nanoTime() > deadline) {
                p.destroyForcibly().waitFor();
                throw new AssertionError("waited " + timeout + " for " + what);
            }
            Thread.sleep(POLL_MILLIS);
        }
    }

    /** Polls {@code condition} until it holds; fails after {@code timeout}. */
    public static void await(Duration timeout, String what, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("waited " + timeout + " for " + what);
            }
            Thread.sleep(POLL_MILLIS);
        }
    }

    /**
     * Lets {@code p} run for up to {@code delayMillis}, then sends it SIGKILL (no shutdown hooks, nothing flushed) and
     * waits for its end. Returns whether the signal ended it; false when it ended on its own first.
     */
    public static boolean killAfter(Process p, long delayMillis) throws InterruptedException {
        if (p.waitFor(delayMillis, TimeUnit.MILLISECONDS)) {
            return false;
        }
        p.destroyForcibly(); // SIGKILL
        return p.waitFor() == KILLED;
    }

    /** Whether the Linux process table can show a child's open files ({@code /proc/PID/fd}). */
    public static boolean canSeeOpenFiles() {
        return Files.isDirectory(Path.of("/proc/self/fd"));
    }

    /** Whether {@code p} has {@code file} open (read from {@code /proc/PID/fd}; false where that does not exist). */
    public static boolean hasOpen(Process p, Path file) {
        Path target = file.toAbsolutePath().normalize();
        try (var fds = Files.list(Path.of("/proc", Long.toString(p.pid()), "fd"))) {
            return fds.anyMatch(fd -> {
                try {
                    return Files.readSymbolicLink(fd).equals(target);
                } catch (IOException | UnsupportedOperationException e) {
                    return false; // closed meanwhile
                }
            });
        } catch (IOException | UncheckedIOException e) {
            return false; // the process ended meanwhile
        }
    }

    /** One independent kill sequence (its own state), given its lane number. */
    @FunctionalInterface
    public interface Lane {
        void run(int lane) throws Exception;
    }

    /**
     * Runs lanes {@code 0..lanes-1} on {@code parallelism} threads (children mostly start JVMs and wait, so two
     * sequences overlap well even on two cores); rethrows the first failure.
     */
    public static void lanes(int lanes, int parallelism, Lane lane) {
        ExecutorService pool = Executors.newFixedThreadPool(parallelism);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int i = 0; i < lanes; i++) {
                int n = i;
                done.add(pool.submit(() -> {
                    lane.run(n);
                    return null;
                }));
            }
            CrashSweep.awaitAll(pool, done);
        } finally {
            pool.shutdownNow();
        }
    }

    /** Milliseconds since {@code startNanos}. */
    public static long millisSince(long startNanos) {
        return (System.nanoTime() - startNanos) / 1_000_000;
    }

    /** A delay in {@code [0, span)} ms. */
    public static long delayWithin(Random random, long spanMillis) {
        return spanMillis <= 0 ? 0 : (long) (random.nextDouble() * spanMillis);
    }
}
