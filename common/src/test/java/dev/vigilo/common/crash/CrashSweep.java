package dev.vigilo.common.crash;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeSet;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * Test harness for crash-point sweeps ({@link CrashPoints}): runs a workload's main class in child JVMs (this JVM's
 * java and class path), once traced to count and name its durable boundaries, then once per chosen boundary halted
 * there. What a test does after each halt (resume, compare with an uninterrupted run) is its own.
 *
 * <p>Which boundaries: all of them when there are at most the test's limit, or with {@value #EXHAUSTIVE}{@code
 * =true}; otherwise the limit (or {@value #LIMIT}{@code =N}) chosen at random, the first and the last always among
 * them, with a seed that is printed and can be fixed with {@value #SEED}{@code =S}.
 */
public final class CrashSweep {
    /** System property: halt at every boundary, whatever the test's limit. */
    public static final String EXHAUSTIVE = "vigilo.crash.exhaustive";
    /** System property: how many boundaries to halt at when not exhaustive. */
    public static final String LIMIT = "vigilo.crash.limit";
    /** System property: the seed of the random choice. */
    public static final String SEED = "vigilo.crash.seed";

    /** Options that make a short-lived child JVM start faster; they change no behaviour under test. */
    public static final List<String> FAST_START = List.of("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xss1m");

    private final String mainClass;
    private final List<String> jvmOptions;
    private final Path workDirectory;

    /**
     * @param mainClass     the workload's main class (on this JVM's class path)
     * @param jvmOptions    extra options of every child
     * @param workDirectory where child output and traces go
     */
    public CrashSweep(String mainClass, List<String> jvmOptions, Path workDirectory) {
        this.mainClass = mainClass;
        this.jvmOptions = List.copyOf(jvmOptions);
        this.workDirectory = workDirectory;
    }

    /** How one child ended. */
    public record Outcome(int exitCode, String out, String err) {
        /** Whether it was halted at a boundary. */
        public boolean halted() {
            return exitCode == CrashPoints.HALT_STATUS;
        }
    }

    /** The boundaries to halt at and how they were chosen. */
    public record Selection(List<Integer> points, int total, long seed, boolean all) {
        @Override
        public String toString() {
            return all
                    ? "all " + total + " boundaries"
                    : points.size() + " of " + total + " boundaries (seed " + seed + ", -D" + SEED + "=" + seed
                            + " repeats it, -D" + EXHAUSTIVE + "=true runs all)";
        }
    }

    /** Runs the workload uninterrupted, tracing it; returns its boundaries' names in order. */
    public List<String> trace(Duration timeout, String... args) {
        Path trace = workDirectory.resolve("trace-" + System.nanoTime() + ".txt");
        Outcome o = run(List.of("-D" + CrashPoints.TRACE_PROPERTY + "=" + trace), timeout, args);
        if (o.exitCode() != 0) {
            throw new AssertionError("the traced run exited " + o.exitCode() + ": " + o.err() + o.out());
        }
        try {
            List<String> names = new ArrayList<>();
            if (Files.exists(trace)) {
                for (String line : Files.readAllLines(trace, StandardCharsets.UTF_8)) {
                    names.add(line.substring(line.indexOf(' ') + 1));
                }
            }
            return names;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Runs the workload, halting it at boundary {@code n} (1-based). */
    public Outcome haltAt(int n, Duration timeout, String... args) {
        return run(List.of("-D" + CrashPoints.HALT_AT_PROPERTY + "=" + n), timeout, args);
    }

    /** Runs the workload in a child JVM with extra {@code options}. */
    public Outcome run(List<String> options, Duration timeout, String... args) {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(FAST_START);
        command.addAll(jvmOptions);
        command.addAll(options);
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(mainClass);
        command.addAll(List.of(args));
        try {
            Files.createDirectories(workDirectory);
            Path out = Files.createTempFile(workDirectory, "child", ".out");
            Path err = Files.createTempFile(workDirectory, "child", ".err");
            try {
                Process p = new ProcessBuilder(command)
                        .redirectOutput(out.toFile())
                        .redirectError(err.toFile())
                        .start();
                if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                    p.destroyForcibly().waitFor();
                    throw new AssertionError(mainClass + " " + String.join(" ", args) + " did not end within " + timeout
                            + ": " + Files.readString(err));
                }
                return new Outcome(p.exitValue(), Files.readString(out), Files.readString(err));
            } finally {
                Files.deleteIfExists(out);
                Files.deleteIfExists(err);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", e);
        }
    }

    /** Halts one workload at one boundary (in a child JVM, on a state of its own). */
    @FunctionalInterface
    public interface Halt {
        Outcome at(int point) throws Exception;
    }

    /** Resumes what a halt left and compares the end state; throws (an assertion) when it differs. */
    @FunctionalInterface
    public interface Check {
        void after(int point, Outcome halted) throws Exception;
    }

    /**
     * For every point of {@code selection}: {@code halt} on up to {@code parallelism} threads (children are mostly
     * JVM start-up, so they overlap well), then {@code check}, one check at a time (checks resume in this JVM).
     * Stops at the first failure and rethrows it.
     */
    public static void forEach(Selection selection, int parallelism, Halt halt, Check check) {
        ExecutorService pool = Executors.newFixedThreadPool(parallelism);
        Object checking = new Object();
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int point : selection.points()) {
                done.add(pool.submit(() -> {
                    long start = System.nanoTime();
                    Outcome o = halt.at(point);
                    long halted = System.nanoTime();
                    synchronized (checking) {
                        long checkStart = System.nanoTime();
                        check.after(point, o);
                        System.out.printf(
                                "crash sweep: boundary %d %s: child %d ms, resume and check %d ms%n",
                                point,
                                o.halted() ? "halted" : "not reached (exit " + o.exitCode() + ")",
                                (halted - start) / 1_000_000,
                                (System.nanoTime() - checkStart) / 1_000_000);
                    }
                    return null;
                }));
            }
            awaitAll(pool, done);
        } finally {
            pool.shutdownNow();
        }
    }

    /**
     * Waits for the tasks {@code done} of {@code pool} in order; at the first failure stops the others and rethrows
     * it (an {@link Error} as it is, anything else wrapped in an {@link AssertionError}).
     */
    static void awaitAll(ExecutorService pool, List<Future<?>> done) {
        try {
            for (Future<?> f : done) {
                try {
                    f.get();
                } catch (ExecutionException e) {
                    pool.shutdownNow();
                    if (e.getCause() instanceof Error err) {
                        throw err;
                    }
                    throw new AssertionError(e.getCause());
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", e);
        }
    }

    /** Threads for {@link #forEach}: the machine's processors, at most 4. */
    public static int parallelism() {
        return Math.max(1, Math.min(4, Runtime.getRuntime().availableProcessors()));
    }

    /**
     * Chooses the boundaries to halt at in a trace whose few protocol steps are surrounded by many repetitions of the
     * same boundaries (an execution writes three storage boundaries per case transcript around a handful of claims,
     * receipts and completions): all of them when {@code names.size() <= limit} or {@value #EXHAUSTIVE} is set;
     * otherwise every boundary whose name occurs at most {@code rareAtMost} times, with the three before it and the
     * one after it (a step's own writes, such as a receipt's before its completion, and the state right after it),
     * the first and the last, and random others up to
     * {@code limit} ({@value #LIMIT} overrides it). Prints the choice.
     */
    public static Selection selectAroundRareSteps(List<String> names, int rareAtMost, int limit) {
        int total = names.size();
        int max = Integer.getInteger(LIMIT, limit);
        if (Boolean.getBoolean(EXHAUSTIVE) || total <= max) {
            return select(total, max);
        }
        long seed = Long.getLong(SEED, System.nanoTime());
        Map<String, Integer> counts = new HashMap<>();
        names.forEach(n -> counts.merge(n, 1, Integer::sum));
        TreeSet<Integer> chosen = new TreeSet<>(List.of(1, total));
        for (int i = 1; i <= total; i++) {
            if (counts.get(names.get(i - 1)) <= rareAtMost) {
                for (int j = Math.max(1, i - 3); j <= Math.min(total, i + 1); j++) {
                    chosen.add(j);
                }
            }
        }
        Random random = new Random(seed);
        while (chosen.size() < Math.min(max, total)) {
            chosen.add(1 + random.nextInt(total));
        }
        Selection s = new Selection(List.copyOf(chosen), total, seed, false);
        System.out.println("crash sweep: " + s + "; every step occurring at most " + rareAtMost
                + " times is halted at, with the 3 boundaries before it and the one after it");
        return s;
    }

    /**
     * Chooses the boundaries to halt at among {@code 1..total}: all when {@code total <= limit} or {@value
     * #EXHAUSTIVE} is set, else {@code limit} ({@value #LIMIT} overrides it) at random. Prints the choice.
     */
    public static Selection select(int total, int limit) {
        int max = Integer.getInteger(LIMIT, limit);
        long seed = Long.getLong(SEED, System.nanoTime());
        Selection s;
        if (Boolean.getBoolean(EXHAUSTIVE) || total <= max) {
            List<Integer> all = new ArrayList<>();
            for (int i = 1; i <= total; i++) {
                all.add(i);
            }
            s = new Selection(all, total, seed, true);
        } else {
            Random random = new Random(seed);
            TreeSet<Integer> chosen = new TreeSet<>(List.of(1, total));
            while (chosen.size() < max) {
                chosen.add(1 + random.nextInt(total));
            }
            s = new Selection(List.copyOf(chosen), total, seed, false);
        }
        System.out.println("crash sweep: " + s);
        return s;
    }
}
