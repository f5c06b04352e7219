package dev.vigilo.bench;

import dev.vigilo.control.ControlDatabase;
import dev.vigilo.control.ControlSettings;
import dev.vigilo.exec.ExecutionConfig;
import dev.vigilo.exec.Placements;
import dev.vigilo.exec.worker.Worker;
import dev.vigilo.storage.StorageConfig;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.nio.file.Path;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A worker process of {@link ExecutionBenchmark}: what {@code vigilo worker --exit-when-idle --concurrency N} does
 * (joins the embedded control database, opens the default placement, runs {@link Worker} with its production
 * options), plus timing lines on standard output for the benchmark to read (process CPU time in milliseconds beside
 * each wall-clock time):
 *
 * <pre>
 * bench-worker main EPOCH_MS CPU_MS        entered main (JVM started)
 * bench-worker ready EPOCH_MS CPU_MS       control database joined, placements open; the worker starts
 * bench-worker claim EPOCH_MS CPU_MS       the worker's first chunk lease was claimed (printed once)
 * bench-worker chunk EPOCH_MS CPU_MS       a chunk was completed (its receipt recorded under the lease)
 * bench-worker agent CASES AGENT_MS CPU_MS  cases executed, the agent's wall time summed over them, process CPU
 *                                         time (at exit)
 * bench-worker settled MICROSECONDS CPU_MS         (when this worker settled the run: how long settlement took)
 * bench-worker rss PEAK_RSS_BYTES             the process's peak resident set ({@code VmHWM}, -1 where unknown)
 * bench-worker errored CASES                  executed cases that ended errored
 * bench-worker threads PEAK LIVE              the process's peak and final live thread counts
 * bench-worker exit PEAK_LIVE_HEAP_BYTES REPORT
 * </pre>
 *
 * Arguments: {@code POSTGRES_DIR STORE_ROOT CONCURRENCY [HEAP_PROBE_SECONDS]}. With a probe interval, a thread forces
 * a full GC at that interval and at exit and keeps the largest heap in use right after one: the peak live heap (the
 * full GCs cost a little throughput, so throughput runs go without). Without it the peak is reported as -1.
 */
public final class ExecutionWorkerMain {
    private ExecutionWorkerMain() {}

    public static void main(String[] args) throws Exception {
        // As the vigilo command does; -Dvigilo.bench.asyncPool=default leaves the JVM's default (an A/B of it).
        if (!"default".equals(System.getProperty("vigilo.bench.asyncPool"))) {
            dev.vigilo.common.concurrent.Threads.asyncPoolOfAtLeastTwo();
        }
        mark("main");
        Path postgres = Path.of(args[0]);
        StorageConfig storage = StorageConfig.localDefault(Path.of(args[1]));
        int concurrency = Integer.parseInt(args[2]);
        long probeSeconds = args.length > 3 ? Long.parseLong(args[3]) : 0;
        // an execution.toml: the benchmark's execution databases when they are not the control database
        ExecutionConfig execution =
                args.length > 4 ? ExecutionConfig.parse(Path.of(args[4])) : ExecutionConfig.defaults();
        AtomicLong peak = new AtomicLong(-1);
        AtomicBoolean running = new AtomicBoolean(true);
        Thread probe = new Thread(() -> probe(probeSeconds, peak, running), "heap-probe");
        probe.setDaemon(true);
        if (probeSeconds > 0) {
            probe.start();
        }
        AtomicBoolean claimed = new AtomicBoolean();
        AtomicLong completed = new AtomicLong();
        AtomicLong executed = new AtomicLong();
        AtomicLong erroredCases = new AtomicLong();
        AtomicLong agentNanos = new AtomicLong();
        Worker.Report report;
        try (ControlDatabase control = ControlDatabase.open(new ControlSettings.Embedded(postgres));
                Placements placements = Placements.open(control, execution)) {
            Worker.Listener listener = new Worker.Listener() {
                @Override
                public void chunkClaimed(UUID runId, long chunkIndex) {
                    if (claimed.compareAndSet(false, true)) {
                        mark("claim");
                    }
                }

                @Override
                public void chunkCompleted(UUID runId, long chunkIndex, int cases) {
                    mark("chunk");
                    long chunks = completed.incrementAndGet(); // chunk threads complete concurrently
                    if (chunks % 20 == 0) {
                        // The compiler threads' CPU so far, every 20 chunks: how much of a window is JIT warm-up.
                        System.out.println("bench-worker jit " + chunks + " " + vmThreadCpuMillis()[0]);
                    }
                }

                @Override
                public void runSettled(UUID runId, String status, Duration took) {
                    System.out.println("bench-worker settled " + took.toNanos() / 1_000 + " " + cpuMillis());
                }

                @Override
                public void caseExecuted(UUID runId, Duration agentTime, boolean errored) {
                    executed.incrementAndGet();
                    if (errored) {
                        erroredCases.incrementAndGet();
                    }
                    agentNanos.addAndGet(agentTime.toNanos());
                }
            };
            mark("ready");
            report = new Worker(placements, storage, Worker.Options.defaults(concurrency, true), listener).run();
        }
        if (probeSeconds > 0) {
            running.set(false);
            probe.interrupt();
            probe.join();
            System.gc();
            peak.accumulateAndGet(heapUsed(), Math::max);
        }
        System.out.println(
                "bench-worker agent " + executed.get() + " " + agentNanos.get() / 1_000_000 + " " + cpuMillis());
        System.out.println("bench-worker rss " + peakRssBytes());
        long[] vm = vmThreadCpuMillis();
        System.out.println("bench-worker vmcpu " + vm[0] + " " + vm[1]);
        System.out.println("bench-worker errored " + erroredCases.get());
        System.out.println("bench-worker threads "
                + ManagementFactory.getThreadMXBean().getPeakThreadCount() + " "
                + ManagementFactory.getThreadMXBean().getThreadCount());
        System.out.println("bench-worker threadnames " + sampledThreads + " " + threadNames);
        System.out.println("bench-worker exit " + peak.get() + " " + report);
        System.exit(0);
    }

    /**
     * The peak resident set of this process so far, from the kernel ({@code VmHWM} in {@code /proc/self/status}):
     * heap, metaspace, code, thread stacks and native buffers together, what the machine must give the worker.
     */
    static long peakRssBytes() {
        try {
            for (String line : java.nio.file.Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith("VmHWM:")) {
                    return Long.parseLong(line.substring(6).trim().split("\\s+")[0]) * 1024;
                }
            }
        } catch (java.io.IOException | RuntimeException e) {
            // not Linux: unknown
        }
        return -1;
    }

    /**
     * CPU milliseconds of the JVM's compiler threads and of its garbage collector's threads so far, {@code {jit, gc}}
     * (from {@code /proc/self/task}: these threads are not Java threads, so the thread MX bean does not see them);
     * {@code {-1, -1}} when unknown (not Linux).
     */
    static long[] vmThreadCpuMillis() {
        long jit = 0;
        long gc = 0;
        long msPerTick = 10; // USER_HZ is 100 on Linux: a tick is 10 ms
        try (var tasks = java.nio.file.Files.list(Path.of("/proc/self/task"))) {
            for (Path task : tasks.toList()) {
                String name;
                String stat;
                try {
                    name = java.nio.file.Files.readString(task.resolve("comm")).trim();
                    stat = java.nio.file.Files.readString(task.resolve("stat"));
                } catch (java.io.IOException gone) {
                    continue; // the thread ended meanwhile
                }
                // Fields after the command's closing parenthesis: state is field 3, utime 14, stime 15.
                String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
                long ms = (Long.parseLong(f[11]) + Long.parseLong(f[12])) * msPerTick;
                if (name.startsWith("C1 Compiler") || name.startsWith("C2 Compiler")) {
                    jit += ms;
                } else if (name.startsWith("GC Thread") || name.startsWith("G1 ")) {
                    gc += ms;
                }
            }
        } catch (java.io.IOException | RuntimeException e) {
            return new long[] {-1, -1};
        }
        return new long[] {jit, gc};
    }

    private static void mark(String what) {
        System.out.println("bench-worker " + what + " " + System.currentTimeMillis() + " " + cpuMillis());
    }

    /** Process CPU time (all threads), milliseconds. */
    static long cpuMillis() {
        return ManagementFactory.getPlatformMXBean(com.sun.management.OperatingSystemMXBean.class)
                        .getProcessCpuTime()
                / 1_000_000;
    }

    private static void probe(long seconds, AtomicLong peak, AtomicBoolean running) {
        while (running.get()) {
            try {
                Thread.sleep(seconds * 1000);
            } catch (InterruptedException e) {
                return;
            }
            System.gc();
            peak.accumulateAndGet(heapUsed(), Math::max);
            sampleThreads();
        }
    }

    /** The most live threads a probe saw, and their names without numbers, counted: what the threads are. */
    private static int sampledThreads;

    private static volatile String threadNames = "";

    private static int unnamedShown;

    private static void sampleThreads() {
        java.util.Map<String, Integer> names = new java.util.TreeMap<>();
        java.util.Map<Thread, StackTraceElement[]> all = Thread.getAllStackTraces();
        all.keySet().forEach(t -> names.merge(t.getName().replaceAll("[0-9]+", "#"), 1, Integer::sum));
        // What an unnamed thread runs (a library's thread per task shows here): its stack, once, on standard error.
        all.forEach((t, stack) -> {
            if (unnamedShown < 3 && t.getName().matches("Thread-[0-9]+") && stack.length > 0) {
                unnamedShown++;
                System.err.println("unnamed thread " + t.getName() + ":");
                for (StackTraceElement e : stack) {
                    System.err.println("    at " + e);
                }
            }
        });
        int n = names.values().stream().mapToInt(Integer::intValue).sum();
        if (n > sampledThreads) {
            sampledThreads = n;
            threadNames = names.toString().replace(" ", "");
        }
    }

    private static long heapUsed() {
        MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
        return memory.getHeapMemoryUsage().getUsed();
    }
}
