package dev.vigilo.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One {@link ExecutionWorkerMain} child process, as {@link ExecutionBenchmark} starts it: {@code java -Xmx256m} (or
 * the heap options of a memory comparison), the
 * benchmark's own class path, standard error to a log file. A thread reads its timing lines; completed chunks are
 * also added to a counter shared by the workers of a run. Times are epoch milliseconds.
 */
final class WorkerProcess {
    private final Process process;
    private final long launchedAt;
    private final AtomicLong runChunks;
    private final CountDownLatch firstChunk = new CountDownLatch(1);
    private final Thread reader;
    private volatile long mainAt;
    private volatile long readyAt;
    private volatile long readyCpu;
    private volatile long claimAt;
    private volatile long casesExecuted;
    private volatile long agentMillis;
    private volatile long cpuMillis;
    private volatile long jitMillis = -1;
    private volatile long gcMillis = -1;
    /** The compiler threads' CPU milliseconds after every 20th completed chunk, by completed chunks. */
    private final java.util.concurrent.ConcurrentSkipListMap<Integer, Long> jitAtChunks =
            new java.util.concurrent.ConcurrentSkipListMap<>();

    private volatile long firstChunkAt;
    private volatile long firstChunkCpu;
    private volatile long lastChunkAt;
    private volatile long settledMicros = -1;
    private volatile long peakHeapBytes = -1;
    private volatile long peakRssBytes = -1;
    private volatile long peakThreads = -1;
    private volatile long erroredCases = -1;
    private volatile String threadNames = "";
    private volatile String report = "";
    /** The process CPU milliseconds at each completed chunk, in completion order. */
    private final List<Long> chunkCpu = new java.util.concurrent.CopyOnWriteArrayList<>();

    /** The worker's process id. */
    long pid() {
        return process.pid();
    }

    /** Whether the worker is still running. */
    boolean isAlive() {
        return process.isAlive();
    }

    private WorkerProcess(Process process, long launchedAt, AtomicLong runChunks) {
        this.process = process;
        this.launchedAt = launchedAt;
        this.runChunks = runChunks;
        this.reader = new Thread(this::read, "worker-" + process.pid() + "-stdout");
        reader.setDaemon(true);
        reader.start();
    }

    /**
     * Starts a worker with {@code concurrency} over the embedded control database and store of the benchmark;
     * {@code heapProbeSeconds > 0} makes it measure its peak live heap ({@link ExecutionWorkerMain}).
     */
    static WorkerProcess start(
            Path postgres, Path storeRoot, int concurrency, long heapProbeSeconds, Path log, AtomicLong runChunks)
            throws IOException {
        return start(
                postgres,
                storeRoot,
                concurrency,
                heapProbeSeconds,
                log,
                runChunks,
                List.of("-Xmx256m"),
                Optional.empty());
    }

    /**
     * As above with {@code heap} for the heap options ({@code -Xmx256m} above; empty: the JVM's default) and the
     * execution databases of {@code executionConfig} (an {@code execution.toml}; empty: the control database).
     */
    static WorkerProcess start(
            Path postgres,
            Path storeRoot,
            int concurrency,
            long heapProbeSeconds,
            Path log,
            AtomicLong runChunks,
            List<String> heap,
            Optional<Path> executionConfig)
            throws IOException {
        return start(
                postgres,
                storeRoot,
                concurrency,
                heapProbeSeconds,
                log,
                runChunks,
                heap,
                executionConfig,
                System.getProperty("java.class.path"));
    }

    /**
     * As above, the worker's classes from {@code classpath} (another build of the benchmark, such as a baseline
     * built from an earlier commit, for an A/B comparison in one invocation).
     */
    static WorkerProcess start(
            Path postgres,
            Path storeRoot,
            int concurrency,
            long heapProbeSeconds,
            Path log,
            AtomicLong runChunks,
            List<String> heap,
            Optional<Path> executionConfig,
            String classpath)
            throws IOException {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.addAll(heap);
        String extra = System.getenv("BENCH_WORKER_OPTS"); // e.g. -XX:StartFlightRecording=... to profile
        if (extra != null && !extra.isBlank()) {
            cmd.addAll(List.of(extra.trim().split("\\s+")));
        }
        cmd.addAll(List.of(
                "-cp",
                classpath,
                ExecutionWorkerMain.class.getName(),
                postgres.toString(),
                storeRoot.toString(),
                Integer.toString(concurrency),
                Long.toString(heapProbeSeconds)));
        executionConfig.ifPresent(file -> cmd.add(file.toString()));
        long launched = System.currentTimeMillis();
        Process p = new ProcessBuilder(cmd)
                .redirectError(ProcessBuilder.Redirect.appendTo(log.toFile()))
                .start();
        return new WorkerProcess(p, launched, runChunks);
    }

    private void read() {
        try (BufferedReader in =
                new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
            for (String line; (line = in.readLine()) != null; ) {
                String[] f = line.split(" ", 4);
                if (f.length < 3 || !f[0].equals("bench-worker")) {
                    continue;
                }
                switch (f[1]) {
                    case "main" -> mainAt = Long.parseLong(f[2]);
                    case "ready" -> {
                        readyAt = Long.parseLong(f[2]);
                        readyCpu = Long.parseLong(f[3]);
                    }
                    case "claim" -> claimAt = Long.parseLong(f[2]);
                    case "agent" -> {
                        String[] v = f[3].split(" ");
                        casesExecuted = Long.parseLong(f[2]);
                        agentMillis = Long.parseLong(v[0]);
                        cpuMillis = Long.parseLong(v[1]);
                    }
                    case "chunk" -> {
                        long at = Long.parseLong(f[2]);
                        if (firstChunkAt == 0) {
                            firstChunkCpu = Long.parseLong(f[3]);
                            firstChunkAt = at;
                        }
                        lastChunkAt = at;
                        chunkCpu.add(Long.parseLong(f[3]));
                        runChunks.incrementAndGet();
                        firstChunk.countDown();
                    }
                    case "settled" -> settledMicros = Long.parseLong(f[2]);
                    case "rss" -> peakRssBytes = Long.parseLong(f[2]);
                    case "jit" -> jitAtChunks.put(Integer.parseInt(f[2]), Long.parseLong(f[3]));
                    case "vmcpu" -> {
                        jitMillis = Long.parseLong(f[2]);
                        gcMillis = Long.parseLong(f[3]);
                    }
                    case "threads" -> peakThreads = Long.parseLong(f[2]);
                    case "errored" -> erroredCases = Long.parseLong(f[2]);
                    case "threadnames" -> threadNames = f.length > 3 ? f[2] + " " + f[3] : f[2];
                    case "exit" -> {
                        peakHeapBytes = Long.parseLong(f[2]);
                        report = f.length > 3 ? f[3] : "";
                    }
                    default -> {}
                }
            }
        } catch (IOException e) {
            // the process was killed
        }
    }

    /** The most threads a heap probe saw and their names without numbers, counted (empty without probes). */
    String threadNames() {
        return threadNames;
    }

    /** Executed cases that ended errored (from the exit lines; -1 when it did not exit normally). */
    long erroredCases() {
        return erroredCases;
    }

    /** The worker's peak live thread count (from its exit lines; -1 when it did not exit normally). */
    long peakThreads() {
        return peakThreads;
    }

    /**
     * Steady-state CPU: {@code {cpu ms, chunks}} from the completion of the chunk at a tenth of this worker's
     * completed chunks to its last (start-up, JIT warm-up and the first claims left out); {@code {0, 0}} with fewer
     * than 10 chunks.
     */
    long[] steadyCpu() {
        List<Long> marks = List.copyOf(chunkCpu);
        int n = marks.size();
        if (n < 10) {
            return new long[] {0, 0};
        }
        int k = n / 10;
        return new long[] {marks.get(n - 1) - marks.get(k), n - 1 - k};
    }

    /**
     * CPU milliseconds of the window from the {@code from}-th to the last completed chunk ({@code from} counted
     * from 1): {@code {all threads, compiler threads, chunks}}, the compiler's from the marks every 20 chunks (the mark
     * at or before {@code from}, the last one) or -1 without marks (a baseline build that prints none);
     * {@code {0, 0, 0}} when there are not enough chunks.
     */
    long[] windowCpu(int from) {
        List<Long> marks = List.copyOf(chunkCpu);
        int n = marks.size();
        if (n < 2 || from < 1 || from >= n) {
            return new long[] {0, 0, 0};
        }
        var jitFrom = jitAtChunks.floorEntry(from);
        var jitTo = jitAtChunks.lastEntry();
        long jit = jitFrom == null || jitTo == null ? -1 : jitTo.getValue() - jitFrom.getValue();
        return new long[] {marks.get(n - 1) - marks.get(from - 1), jit, n - from};
    }

    /** Chunks this worker completed (from its chunk lines). */
    int chunksCompleted() {
        return chunkCpu.size();
    }

    /** Microseconds this worker's settlement of the run took; -1 when another worker settled it. */
    long settledMicros() {
        return settledMicros;
    }

    long launchedAt() {
        return launchedAt;
    }

    long mainAt() {
        return mainAt;
    }

    long readyAt() {
        return readyAt;
    }

    /** When the worker claimed its first chunk lease; 0 before. */
    long claimAt() {
        return claimAt;
    }

    /** Cases the worker executed, from its exit lines (0 when it did not exit normally). */
    long casesExecuted() {
        return casesExecuted;
    }

    /** The agent's wall time summed over the executed cases, milliseconds (from the exit lines). */
    long agentMillis() {
        return agentMillis;
    }

    /** CPU of the worker JVM's compiler threads over its life, milliseconds (from the exit lines; -1: unknown). */
    long jitMillis() {
        return jitMillis;
    }

    /** CPU of the worker JVM's garbage collector threads over its life, milliseconds (-1: unknown). */
    long gcMillis() {
        return gcMillis;
    }

    /** The worker's process CPU time at exit, milliseconds (from the exit lines). */
    long cpuMillis() {
        return cpuMillis;
    }

    long firstChunkAt() {
        return firstChunkAt;
    }

    /** Process CPU time (all threads) when the worker was ready, milliseconds. */
    long readyCpu() {
        return readyCpu;
    }

    /** Process CPU time at the first completed chunk, milliseconds. */
    long firstChunkCpu() {
        return firstChunkCpu;
    }

    long lastChunkAt() {
        return lastChunkAt;
    }

    /** Peak live heap from the exit line; -1 without a heap probe or when the worker did not exit normally. */
    long peakHeapBytes() {
        return peakHeapBytes;
    }

    /** Peak resident set of the process from its exit lines; -1 when unknown or it did not exit normally. */
    long peakRssBytes() {
        return peakRssBytes;
    }

    String report() {
        return report;
    }

    /** Waits for the worker's first completed chunk; false when it exited without one or {@code seconds} passed. */
    boolean awaitFirstChunk(long seconds) throws InterruptedException {
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (System.nanoTime() < until) {
            if (firstChunk.await(100, TimeUnit.MILLISECONDS)) {
                return true;
            }
            if (!process.isAlive()) {
                reader.join(TimeUnit.SECONDS.toMillis(10));
                return firstChunk.getCount() == 0;
            }
        }
        return false;
    }

    /** Waits for a normal exit (the worker found no work left) and for its last lines; false on timeout. */
    boolean awaitExit(long seconds) throws InterruptedException {
        if (!process.waitFor(seconds, TimeUnit.SECONDS)) {
            return false;
        }
        reader.join(TimeUnit.SECONDS.toMillis(10));
        return true;
    }

    /** Whether the process still runs. */
    boolean alive() {
        return process.isAlive();
    }

    int exitValue() {
        return process.exitValue();
    }

    /** SIGKILL, as a crash: nothing is given back; held leases expire on their own. */
    void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor();
        reader.join(TimeUnit.SECONDS.toMillis(10));
    }
}
