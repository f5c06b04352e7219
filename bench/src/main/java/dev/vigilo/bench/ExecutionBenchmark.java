package dev.vigilo.bench;

import dev.vigilo.agent.OpenAiTestServer;
import dev.vigilo.agent.OpenAiTestServer.Reply;
import dev.vigilo.control.ControlDatabase;
import dev.vigilo.control.ControlSettings;
import dev.vigilo.dataset.CaseFileSpan;
import dev.vigilo.dataset.DatasetCatalog;
import dev.vigilo.dataset.DatasetEntry;
import dev.vigilo.dataset.DatasetReader;
import dev.vigilo.dataset.UploadProgress;
import dev.vigilo.dataset.UploadRequest;
import dev.vigilo.exec.ExecutionConfig;
import dev.vigilo.exec.ExecutionStatus;
import dev.vigilo.exec.Placements;
import dev.vigilo.exec.admission.Admission;
import dev.vigilo.exec.settlement.RunCancellation;
import dev.vigilo.exec.view.ExecutionStatusReader;
import dev.vigilo.plan.CreateRequest;
import dev.vigilo.plan.CreateResult;
import dev.vigilo.plan.ProfileInput;
import dev.vigilo.plan.PublishedPlan;
import dev.vigilo.plan.RunPreparation;
import dev.vigilo.storage.Deadline;
import dev.vigilo.storage.ObjectStore;
import dev.vigilo.storage.ObjectStores;
import dev.vigilo.storage.StorageConfig;
import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.ToLongFunction;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Execution throughput against a raw baseline in the same run, worker heap, and resume cost.
 *
 * <p>Set-up, in this JVM: the embedded control PostgreSQL (the product's default, {@code fsync} on) in a temporary
 * directory, a local object store beside it, a generated dataset of {@code CASES} (default 100,000) and one of
 * {@code SMALL} (default 10,000) cases uploaded; per measured run a fresh run prepared and admitted
 * ({@code run create}); the agent is trivial: an OpenAI-compatible server in this JVM ({@link OpenAiTestServer}) that
 * answers every question at once, reached through an {@code http} agent profile (a command agent would measure
 * process spawning, not Vigilo). Each case is run by the agent and two evaluators (exact match on every case, a
 * regex on a third of them) under two gates.
 *
 * <p>Workers are real child processes ({@link ExecutionWorkerMain}: {@code Worker} with production options and
 * {@code --exit-when-idle}, {@code -Xmx256m}, concurrency {@value #CONCURRENCY} each).
 *
 * <ol>
 *   <li>Throughput, 1 and 4 worker processes: cases/s from the workers' launch to the last chunk completed (and from
 *       the first completed chunk to the last). Baseline in the same run: {@link RawClaimBaseline} (claim-like
 *       {@code UPDATE ... RETURNING} per chunk, read + SHA-256 of the chunk file and its case files) with 1 and 4
 *       loops, over the same chunks and files.
 *   <li>Heap: the peak live heap of one worker (a full GC every {@value #HEAP_PROBE_SECONDS} s and the heap in use
 *       right after it) over the {@code SMALL} and the {@code CASES} dataset, in two more runs (the forced GCs would
 *       cost the throughput runs a little).
 *   <li>Resume cost: 4 workers killed with SIGKILL once 10% (another run: 90%) of the chunks are done; then, three
 *       times, one worker is started and the time from its launch to its first completed chunk (its first executed
 *       cases, counted once their chunk's receipt is recorded) is taken (median), split into JVM start, joining the
 *       control database, the first claim and the chunk's execution; the worker is killed again. Resume cost must
 *       not grow with completed work. The killed workers' leases are taken at once (same machine: docs/execution.md,
 *       "Resume after a kill").
 *   <li>Requests redone: 4 workers over the {@code SMALL} dataset killed with SIGKILL at 50% of the chunks, then one
 *       worker finishes the run; every request the agent's server received beyond one per case was redone (work a
 *       killed worker did and lost), with the restarted worker's launch to its first agent call.
 * </ol>
 *
 * <p>Every worker reports its peak resident set ({@code VmHWM}) at exit; the summary line gives cases/s, worker CPU
 * per case, peak RSS and requests redone, the figures issue 27 compares.
 *
 * <p>Beside the wall times: the CPU time per case of the workers, of the PostgreSQL server ({@link PostgresCpu}) and
 * of this JVM (the agent's server), and the load average, since the machine may be shared.
 *
 * <p>Epochs ({@code bench/run exec epochs [CASES EPOCHS]}, default 100,000 and 5): the same trivial agent, one worker,
 * a run of {@code CASES} cases of one epoch against a run of {@code CASES / EPOCHS} cases of {@code EPOCHS} epochs
 * (the same number of agent calls), twice each in the order A B B A; executed epochs per second (best of two), the
 * worker's peak live heap of each (two more runs with the probe) and the time settlement took in each (the worker's
 * settlement call: aggregate sums only, so it must not grow with epochs).
 *
 * <p>Judges ({@code bench/run exec judge [CASES EPOCHS]}, default 2,000 and 1): the same trivial agent, one worker,
 * a run of {@code CASES} cases ({@code EPOCHS} epochs each) whose every case is also graded by a {@code judge}
 * evaluator over a judge server in this JVM ({@link OpenAiTestServer}) that answers every call after
 * {@value #JUDGE_LATENCY_MS} ms (a score, a reason and token usage), against the same run without the judge (the
 * baseline), twice each in the order A B B A: cases/s (best of two) beside the ceiling the judge's latency sets
 * (concurrency / latency); the peak number of judge requests in flight at the server, which must not exceed the
 * worker's concurrency (the judge runs in the case's slot of the worker's case pool); the judge calls the run counted
 * (its settled usage) beside those the server answered; and the worker's peak live heap of each (two more runs with
 * the probe).
 *
 * <p>CPU ({@code bench/run exec cpu [CASES PAIRS]}, default 20,000 and 2): one worker over a run of {@code CASES}
 * cases with a baseline build's classes ({@code BENCH_BASELINE_CP}, A) and this build's (B), in the order A B B A
 * ({@code PAIRS} pairs): worker CPU per case over the whole run and in steady state (from the completion of the
 * worker's chunk at a tenth of its chunks to its last: start-up and JIT warm-up left out), cases/s and load.
 *
 * <p>Run: {@code bench/run exec [CASES SMALL]}. {@code BENCH_WORKER_OPTS} adds JVM options to the workers (e.g. a
 * flight recording).
 */
public final class ExecutionBenchmark {
    /** Cases (and chunks) each worker process executes at once. */
    static final int CONCURRENCY = 8;
    /**
     * Chunks that must still be unclaimed when all workers are killed for every restart to find one at once: the
     * killed workers' leases (4 x {@value #CONCURRENCY}) plus what the three killed restarts hold.
     */
    static final int RESUME_CHUNKS_NEEDED = 4 * CONCURRENCY + 3 * CONCURRENCY;
    /** How often a heap-measuring worker forces a full GC to read its live heap. */
    static final long HEAP_PROBE_SECONDS = 1;

    private static final String PROFILE = """
            name: exec-bench
            agent: {kind: http, url: "%s", model: bench, max_attempts: 1, timeout_seconds: 30}
            evaluators:
              - {name: exact, kind: exact_match}
              - {name: digits, kind: regex, pattern: "^[0-9]+$", applies_to: {groups: [math]}}
            gates:
              - {name: all, required_evaluators: [exact], min_pass_rate: 0.9}
              - {name: math, required_evaluators: [exact, digits], min_pass_rate: 0.9}
            """;
    private static final Pattern QUESTION = Pattern.compile("what is (\\d+) \\* 2");
    /** How long the judge server of {@code bench/run exec judge} takes to answer each call. */
    static final long JUDGE_LATENCY_MS = 20;
    /**
     * {@link #PROFILE} with a judge on every case, required by the gate {@code all}; its first {@code %s} the agent's
     * URL, its second the judge's.
     */
    private static final String JUDGE_PROFILE = """
            name: exec-bench-judge
            agent: {kind: http, url: "%s", model: bench, max_attempts: 1, timeout_seconds: 30}
            evaluators:
              - {name: exact, kind: exact_match}
              - {name: digits, kind: regex, pattern: "^[0-9]+$", applies_to: {groups: [math]}}
              - name: quality
                kind: judge
                url: "%s"
                model: judge-model
                rubric: "The question was {{input}}; the reference answer is {{expected}}. Grade the answer {{output}}."
                scale: {min: 0, max: 10}
                pass_score: 0.7
                max_attempts: 1
                timeout_seconds: 30
            gates:
              - {name: all, required_evaluators: [exact, quality], min_pass_rate: 0.9}
              - {name: math, required_evaluators: [exact, digits], min_pass_rate: 0.9}
            pricing:
              judge-model: {input: 0.15, output: 0.60}
            """;

    private final Path work;
    private final Path postgres;
    private final Path storeRoot;
    private final StorageConfig storage;
    private final ControlDatabase control;
    private final ObjectStore store;
    private final Placements placements;
    private final PostgresCpu pgCpu;
    private int logs;

    private ExecutionBenchmark(Path work, ControlDatabase control, ObjectStore store, Placements placements) {
        this.work = work;
        this.postgres = work.resolve("postgres");
        this.storeRoot = work.resolve("objects");
        this.storage = StorageConfig.localDefault(storeRoot);
        this.control = control;
        this.store = store;
        this.placements = placements;
        this.pgCpu = new PostgresCpu(postgres.resolve("data"));
    }

    public static void main(String[] args) throws Exception {
        if (args.length > 0 && args[0].equals("claims")) {
            claimsMain(
                    args.length > 1 ? Integer.parseInt(args[1]) : 200_000,
                    args.length > 2 ? Integer.parseInt(args[2]) : 4,
                    args.length > 3 ? Integer.parseInt(args[3]) : 16,
                    args.length > 4 ? Integer.parseInt(args[4]) : 0);
            return;
        }
        if (args.length > 0 && args[0].equals("judge")) {
            judgeMain(
                    args.length > 1 ? Integer.parseInt(args[1]) : 2_000,
                    args.length > 2 ? Integer.parseInt(args[2]) : 1);
            return;
        }
        if (args.length > 0 && args[0].equals("redone")) {
            redoneMain(args.length > 1 ? Integer.parseInt(args[1]) : 10_000);
            return;
        }
        if (args.length > 0 && args[0].equals("inflight")) {
            inflightMain(
                    args.length > 1 ? Integer.parseInt(args[1]) : 0,
                    args.length > 2 ? Integer.parseInt(args[2]) : 2_000,
                    args.length > 3
                            ? java.util.Arrays.stream(args[3].split(","))
                                    .map(String::trim)
                                    .mapToInt(Integer::parseInt)
                                    .toArray()
                            : new int[] {64, 1024, 4096},
                    args.length > 4
                            ? java.util.Arrays.stream(args[4].split(","))
                                    .map(String::trim)
                                    .toList()
                            : List.of());
            return;
        }
        if (args.length > 0 && args[0].equals("cpu")) {
            cpuMain(
                    args.length > 1 ? Integer.parseInt(args[1]) : 20_000,
                    args.length > 2 ? Integer.parseInt(args[2]) : 2);
            return;
        }
        if (args.length > 0 && args[0].equals("memory")) {
            memoryMain(args.length > 1 ? Integer.parseInt(args[1]) : 20_000);
            return;
        }
        if (args.length > 0 && args[0].equals("epochs")) {
            epochsMain(
                    args.length > 1 ? Integer.parseInt(args[1]) : 100_000,
                    args.length > 2 ? Integer.parseInt(args[2]) : 5);
            return;
        }
        int cases = args.length > 0 ? Integer.parseInt(args[0]) : 100_000;
        int small = args.length > 1 ? Integer.parseInt(args[1]) : 10_000;
        Path work = Files.createTempDirectory("vigilo-bench-exec-");
        System.out.printf(
                "%d cores, work dir %s, worker concurrency %d, worker heap -Xmx256m%n",
                Runtime.getRuntime().availableProcessors(), work, CONCURRENCY);
        long leftAt90 = (cases + 99) / 100 / 10;
        if (leftAt90 < RESUME_CHUNKS_NEEDED) {
            System.out.printf(
                    "note: at 90%% only about %d chunks are left, fewer than the %d that 4 killed workers and 3"
                            + " restarts can hold: a restart takes the killed workers' leases at once (same machine),"
                            + " but may find nothing left (use at least %,d cases to measure resume cost)%n",
                    leftAt90, RESUME_CHUNKS_NEEDED, RESUME_CHUNKS_NEEDED * 1000);
        }
        StorageConfig storage = StorageConfig.localDefault(work.resolve("objects"));
        boolean done = false;
        try (ControlDatabase control = ControlDatabase.open(new ControlSettings.Embedded(work.resolve("postgres")));
                ObjectStore store = ObjectStores.open(storage.defaultStore());
                Placements placements = Placements.open(control, ExecutionConfig.defaults())) {
            new ExecutionBenchmark(work, control, store, placements).run(cases, small);
            done = true;
        } finally {
            if (done) {
                deleteTree(work);
            } else {
                System.out.println("work dir kept for its worker logs: " + work);
            }
        }
    }

    private static void epochsMain(int cases, int epochs) throws Exception {
        Path work = Files.createTempDirectory("vigilo-bench-exec-");
        System.out.printf(
                "%d cores, work dir %s, worker concurrency %d, worker heap -Xmx256m; %,d cases x 1 epoch against %,d"
                        + " cases x %d epochs%n",
                Runtime.getRuntime().availableProcessors(), work, CONCURRENCY, cases, cases / epochs, epochs);
        StorageConfig storage = StorageConfig.localDefault(work.resolve("objects"));
        try (ControlDatabase control = ControlDatabase.open(new ControlSettings.Embedded(work.resolve("postgres")));
                ObjectStore store = ObjectStores.open(storage.defaultStore());
                Placements placements = Placements.open(control, ExecutionConfig.defaults())) {
            new ExecutionBenchmark(work, control, store, placements).runEpochs(cases, epochs);
        }
        deleteTree(work);
    }

    /** The heap the {@code vigilo} launcher gives {@code vigilo worker --concurrency n} (docs/configuration.md). */
    static int launcherHeapMiB(int concurrency) {
        return concurrency <= 64 ? 96 + 2 * concurrency : 224 + (concurrency - 64) / 4;
    }

    /** The requests-redone phase of {@code bench/run exec} alone, over a run of {@code cases}. */
    private static void redoneMain(int cases) throws Exception {
        Path work = Files.createTempDirectory("vigilo-bench-exec-");
        System.out.printf(
                "%d cores, work dir %s, worker concurrency %d, worker heap -Xmx256m; %,d cases%n",
                Runtime.getRuntime().availableProcessors(), work, CONCURRENCY, cases);
        StorageConfig storage = StorageConfig.localDefault(work.resolve("objects"));
        try (ControlDatabase control = ControlDatabase.open(new ControlSettings.Embedded(work.resolve("postgres")));
                ObjectStore store = ObjectStores.open(storage.defaultStore());
                Placements placements = Placements.open(control, ExecutionConfig.defaults())) {
            ExecutionBenchmark b = new ExecutionBenchmark(work, control, store, placements);
            DatasetEntry dataset = b.upload("redone", cases);
            try (OpenAiTestServer llm = agent()) {
                Redone r = b.redone(b.prepare(dataset, llm), llm, 0.50);
                System.out.printf(
                        "REDONE %,d requests redone of %,d cases (%.2f%%), launch to the first agent call %.2f s,"
                                + " to the first claim %.2f s%n",
                        r.requestsRedone(),
                        r.cases(),
                        100.0 * r.requestsRedone() / r.cases(),
                        r.firstCallMillis() / 1000.0,
                        r.firstClaimMillis() / 1000.0);
            }
        }
        deleteTree(work);
    }

    /** Environment variable naming the baseline build's classpath for {@code bench/run exec cpu}. */
    static final String BASELINE_CLASSPATH = "BENCH_BASELINE_CP";

    /** The baseline build's bench classpath ({@value #BASELINE_CLASSPATH}); exits with 2 when it is not set. */
    private static String baselineClasspath() {
        String baseline = System.getenv(BASELINE_CLASSPATH);
        if (baseline == null || baseline.isBlank()) {
            System.err.println("bench/run exec cpu (and the inflight variant base) compares with a baseline build: set "
                    + BASELINE_CLASSPATH
                    + " to its bench classpath (DIR/bench/target/vigilo-bench-0.1.0-SNAPSHOT.jar:DIR/bench/target/lib/*"
                    + " of a checkout of the baseline commit built with `mvn -DskipTests package -pl bench -am`)");
            System.exit(2);
        }
        return baseline;
    }

    private static void cpuMain(int cases, int pairs) throws Exception {
        String baseline = baselineClasspath();
        Path work = Files.createTempDirectory("vigilo-bench-exec-");
        System.out.printf(
                "%d cores, work dir %s, worker concurrency %d, -Xmx256m; %,d cases, baseline (A) against this build (B),"
                        + " %d pair(s) A B B A ...%n",
                Runtime.getRuntime().availableProcessors(), work, CONCURRENCY, cases, pairs);
        StorageConfig storage = StorageConfig.localDefault(work.resolve("objects"));
        try (ControlDatabase control = ControlDatabase.open(new ControlSettings.Embedded(work.resolve("postgres")));
                ObjectStore store = ObjectStores.open(storage.defaultStore());
                Placements placements = Placements.open(control, ExecutionConfig.defaults())) {
            new ExecutionBenchmark(work, control, store, placements).runCpu(cases, pairs, baseline);
        }
        deleteTree(work);
    }

    /**
     * One worker over a run of {@code cases}, alternately with the baseline's classes (A) and this build's (B), in
     * the order A B B A (repeated {@code pairs / 2} times, an odd last pair A B): worker CPU per case over the whole
     * run and in steady state ({@link WorkerProcess#steadyCpu}), cases/s and the load average of each, so that a
     * change's CPU saving is measured against its baseline under the same load.
     */
    private void runCpu(int cases, int pairs, String baseline) throws Exception {
        DatasetEntry dataset = upload("cpu", cases);
        String current = System.getProperty("java.class.path");
        List<String> order = new ArrayList<>();
        for (int i = 0; i < pairs; i++) {
            order.addAll(i % 2 == 0 ? List.of("A", "B") : List.of("B", "A"));
        }
        Map<String, List<Execution>> runs = new java.util.TreeMap<>();
        for (String build : order) {
            try (OpenAiTestServer llm = agent()) {
                System.out.println(build.equals("A") ? "A (baseline):" : "B (this build):");
                runs.computeIfAbsent(build, k -> new ArrayList<>())
                        .add(execute(
                                prepare(dataset, llm),
                                1,
                                0,
                                workerOptions(build),
                                build.equals("A") ? baseline : current));
            }
        }
        System.out.printf("%nCPU %,d cases, 1 worker, concurrency %d, order %s%n", cases, CONCURRENCY, order);
        System.out.printf(
                "%-16s %24s %24s %30s %30s %22s %30s%n",
                "build",
                "worker CPU ms per case",
                "steady-state ms per case",
                "second half: all / JIT ms/case",
                "of the whole: JIT / GC ms/case",
                "cases/s",
                "load average (start -> end)");
        for (var e : runs.entrySet()) {
            List<Execution> ex = e.getValue();
            System.out.printf(
                    "%-16s %24s %24s %30s %30s %22s %30s%n",
                    e.getKey().equals("A") ? "A baseline" : "B this build",
                    each(ex, "%.3f", Execution::cpuPerCase),
                    each(ex, "%.3f", Execution::steadyCpuPerCase),
                    ex.stream()
                            .map(x -> String.format("%.3f / %.3f", x.lateCpuPerCase(), x.lateJitPerCase()))
                            .toList(),
                    ex.stream()
                            .map(x -> String.format(
                                    "%.3f / %.3f",
                                    x.cpu().jit() / (double) x.cases(), x.cpu().gc() / (double) x.cases()))
                            .toList(),
                    each(ex, "%,.0f", Execution::casesPerSecond),
                    ex.stream().map(Execution::load).toList());
        }
    }

    /**
     * The worker JVM's options for build {@code A} or {@code B} of {@code exec cpu}: {@code -Xmx256m} and what
     * {@code BENCH_WORKER_OPTS_A} or {@code _B} adds (e.g. a JIT setting tried on one side only).
     */
    private static List<String> workerOptions(String build) {
        List<String> options = new ArrayList<>(List.of("-Xmx256m"));
        String extra = System.getenv("BENCH_WORKER_OPTS_" + build);
        if (extra != null && !extra.isBlank()) {
            options.addAll(List.of(extra.trim().split("\\s+")));
        }
        return options;
    }

    /** One figure of each execution, formatted: a cell of the cpu and memory tables (one value per run). */
    private static List<String> each(
            List<Execution> executions, String format, java.util.function.ToDoubleFunction<Execution> figure) {
        return executions.stream()
                .map(x -> String.format(format, figure.applyAsDouble(x)))
                .toList();
    }

    private static void memoryMain(int cases) throws Exception {
        Path work = Files.createTempDirectory("vigilo-bench-exec-");
        System.out.printf(
                "%d cores, work dir %s, worker concurrency %d; %,d cases: the JVM's default heap against the"
                        + " launcher's -Xmx%dm and -Xmx256m%n",
                Runtime.getRuntime().availableProcessors(), work, CONCURRENCY, cases, launcherHeapMiB(CONCURRENCY));
        StorageConfig storage = StorageConfig.localDefault(work.resolve("objects"));
        try (ControlDatabase control = ControlDatabase.open(new ControlSettings.Embedded(work.resolve("postgres")));
                ObjectStore store = ObjectStores.open(storage.defaultStore());
                Placements placements = Placements.open(control, ExecutionConfig.defaults())) {
            new ExecutionBenchmark(work, control, store, placements).runMemory(cases);
        }
        deleteTree(work);
    }

    /**
     * One worker over a run of {@code cases}, with each heap setting in turn, then again in the reverse order (A B C C
     * B A): peak RSS (the kernel's {@code VmHWM}), worker CPU per case over the whole run and in steady state (as
     * {@link #runCpu} reports it), cases/s and the load average of each, so a sizing rule is chosen from what it costs
     * in memory and in speed.
     */
    private void runMemory(int cases) throws Exception {
        DatasetEntry dataset = upload("memory", cases);
        List<List<String>> heaps =
                List.of(List.of(), List.of("-Xmx" + launcherHeapMiB(CONCURRENCY) + "m"), List.of("-Xmx256m"));
        Map<List<String>, List<Execution>> runs = new LinkedHashMap<>();
        List<List<String>> order = new ArrayList<>(heaps);
        List<List<String>> reversed = new ArrayList<>(heaps);
        java.util.Collections.reverse(reversed);
        order.addAll(reversed);
        for (List<String> heap : order) {
            try (OpenAiTestServer llm = agent()) {
                System.out.println("heap " + (heap.isEmpty() ? "default" : heap.get(0)) + ":");
                runs.computeIfAbsent(heap, k -> new ArrayList<>()).add(execute(prepare(dataset, llm), 1, 0, heap));
            }
        }
        System.out.printf("%nMEMORY %,d cases, 1 worker, concurrency %d, 2 cores (A B C C B A)%n", cases, CONCURRENCY);
        System.out.printf(
                "%-24s %22s %26s %30s %22s %30s%n",
                "heap",
                "peak RSS (MiB)",
                "worker CPU ms per case",
                "steady-state CPU ms per case",
                "cases/s",
                "load average (start -> end)");
        for (var e : runs.entrySet()) {
            List<Execution> ex = e.getValue();
            System.out.printf(
                    "%-24s %22s %26s %30s %22s %30s%n",
                    e.getKey().isEmpty() ? "JVM default" : e.getKey().get(0),
                    each(ex, "%.1f", Execution::peakRssMiB),
                    each(ex, "%.3f", Execution::cpuPerCase),
                    each(ex, "%.3f", Execution::steadyCpuPerCase),
                    each(ex, "%,.0f", Execution::casesPerSecond),
                    ex.stream().map(Execution::load).toList());
        }
    }

    /**
     * {@code bench/run exec inflight}: one worker process per concurrency, each over a run of {@code cases} cases (0:
     * four times the concurrency, four waves of calls) against an endpoint answering after {@code latencyMs}: the
     * peak of requests in flight at the endpoint, cases/s against the latency bound (concurrency / latency), the
     * worker's peak thread count, its peak live heap (after a full GC every 2 s), its peak RSS and its CPU per case.
     * The worker gets a 2 GiB heap ceiling so that what it needs shows, not what a rule allowed.
     */
    private static void inflightMain(int cases, int latencyMs, int[] concurrencies, List<String> variants)
            throws Exception {
        Path work = Files.createTempDirectory("vigilo-bench-exec-");
        System.out.printf(
                "%d cores, work dir %s; endpoint latency %d ms, concurrency %s, %s cases per run%n",
                Runtime.getRuntime().availableProcessors(),
                work,
                latencyMs,
                java.util.Arrays.toString(concurrencies),
                cases > 0 ? String.format("%,d", cases) : "4 x concurrency");
        StorageConfig storage = StorageConfig.localDefault(work.resolve("objects"));
        try (ControlDatabase control = ControlDatabase.open(new ControlSettings.Embedded(work.resolve("postgres")));
                ObjectStore store = ObjectStores.open(storage.defaultStore());
                Placements placements = Placements.open(control, ExecutionConfig.defaults())) {
            new ExecutionBenchmark(work, control, store, placements)
                    .runInflight(cases, latencyMs, concurrencies, variants);
        }
        deleteTree(work);
    }

    /**
     * {@code variants} empty: the worker as it is; otherwise each concurrency once per variant, side by side: a number
     * is a work pool size ({@code -Dvigilo.worker.workThreads}), {@code jdkpool} the JVM's default common pool (a
     * thread per async task on 2 cores) instead of the one the {@code vigilo} command sets, {@code base} the worker
     * of the baseline build named by {@code BENCH_BASELINE_CP} (as {@code exec cpu}), {@code -} this build as it is.
     */
    private void runInflight(int cases, int latencyMs, int[] concurrencies, List<String> variants) throws Exception {
        List<String> rows = new ArrayList<>();
        Map<String, FullFlight> histograms = new LinkedHashMap<>();
        List<String> pools = variants.isEmpty() ? List.of("-") : variants;
        for (int c : concurrencies) {
            int n = cases > 0 ? cases : 4 * c;
            DatasetEntry dataset = upload("inflight-" + c, n);
            for (String pool : pools) {
                List<String> jvm = new ArrayList<>(List.of("-Xmx2g"));
                String classpath = System.getProperty("java.class.path");
                if (pool.equals("jdkpool")) {
                    jvm.add("-Dvigilo.bench.asyncPool=default");
                } else if (pool.equals("base")) {
                    classpath = baselineClasspath();
                } else if (!pool.equals("-")) {
                    jvm.add("-Dvigilo.worker.workThreads=" + Integer.parseInt(pool));
                }
                OpenAiTestServer llm = OpenAiTestServer.start();
                Duration latency = Duration.ofMillis(latencyMs);
                llm.answerWith(r -> answer(r).withLatency(latency));
                try (llm) {
                    // A timeout well above the latency: a call the worker gave up on would stay in flight at the
                    // endpoint beside the one replacing it, and its case would end errored.
                    CreateResult run =
                            prepare(dataset, llm, PROFILE.replace("timeout_seconds: 30", "timeout_seconds: 600"));
                    String load = loadAverage();
                    Path log = work.resolve("worker-" + ++logs + ".log");
                    WorkerProcess w = WorkerProcess.start(
                            postgres, storeRoot, c, 2, log, new AtomicLong(), jvm, Optional.empty(), classpath);
                    CompletableFuture<Optional<FullFlight>> flight =
                            CompletableFuture.supplyAsync(() -> fullFlight(w, llm, c));
                    if (!w.awaitExit(3600) || w.exitValue() != 0) {
                        kill(w);
                        throw new IllegalStateException("the worker did not end well; its log: " + log);
                    }
                    flight.join().ifPresent(f -> histograms.put(c + " " + pool, f));
                    double seconds = (w.lastChunkAt() - w.claimAt()) / 1000.0;
                    double rate = n / seconds;
                    double bound = c / (latencyMs / 1000.0);
                    String row = String.format(
                            "%,6d %7s %,8d %,10d %,10.0f %,10.0f %6.0f%% %8d %12.1f %10.1f %10.3f   %s -> %s",
                            c,
                            pool,
                            n,
                            llm.peakInFlight(),
                            rate,
                            bound,
                            100 * rate / bound,
                            w.peakThreads(),
                            w.peakHeapBytes() / 1048576.0,
                            w.peakRssBytes() / 1048576.0,
                            (double) (w.cpuMillis() - w.readyCpu()) / n,
                            load,
                            loadAverage());
                    System.out.println(row);
                    System.out.println("  errored cases " + w.erroredCases() + "; threads at the probes' peak: "
                            + w.threadNames());
                    rows.add(row);
                }
            }
        }
        System.out.printf(
                "%nINFLIGHT endpoint latency %d ms, 1 worker (-Xmx2g ceiling), %d cores%n",
                latencyMs, Runtime.getRuntime().availableProcessors());
        System.out.printf(
                "%6s %7s %8s %10s %10s %10s %7s %8s %12s %10s %10s   %s%n",
                "conc",
                "variant",
                "cases",
                "peak req",
                "cases/s",
                "bound/s",
                "of bnd",
                "threads",
                "live heap MiB",
                "RSS MiB",
                "CPU ms/case",
                "load before -> after");
        rows.forEach(System.out::println);
        printHeapPerCall(histograms);
    }

    /** A worker's live objects at a moment when (nearly) all its calls were in flight at the endpoint. */
    private record FullFlight(int inFlight, ClassHistogram histogram) {}

    /**
     * Waits until the endpoint has answered two waves of calls (so start-up is behind) and holds at least 90% of the
     * most calls it has held so far, then takes the worker's class histogram (a full collection: live objects only);
     * empty when the worker ended first or {@code jcmd} failed (said on standard error).
     */
    private static Optional<FullFlight> fullFlight(WorkerProcess w, OpenAiTestServer llm, int concurrency) {
        try {
            while (w.isAlive()) {
                int now = llm.inFlight();
                if (llm.requestCount() >= 2 * concurrency && now > 0 && now >= 0.9 * llm.peakInFlight()) {
                    ClassHistogram h = ClassHistogram.of(w.pid());
                    return Optional.of(new FullFlight(Math.min(now, llm.inFlight()), h));
                }
                Thread.sleep(50);
            }
        } catch (IOException e) {
            System.err.println("no class histogram of the worker: " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return Optional.empty();
    }

    /**
     * The live heap per call in flight: each histogram against the one with the fewest calls in flight, divided by
     * the difference in calls, with the classes that make most of it. The worker's decoded-file cache and held chunks
     * ({@code dev.vigilo.dataset.*}) grow with the cases read, not with the calls, so they are given apart.
     */
    private static void printHeapPerCall(Map<String, FullFlight> histograms) {
        if (histograms.size() < 2) {
            return;
        }
        Map.Entry<String, FullFlight> least = histograms.entrySet().stream()
                .min(Comparator.comparingInt(e -> e.getValue().inFlight()))
                .orElseThrow();
        System.out.printf(
                "%nLIVE HEAP AT FULL FLIGHT (jcmd GC.class_histogram): %s: %,d calls in flight, %.1f MiB%n",
                least.getKey(),
                least.getValue().inFlight(),
                least.getValue().histogram().totalBytes() / 1048576.0);
        for (Map.Entry<String, FullFlight> e : histograms.entrySet()) {
            int calls = e.getValue().inFlight() - least.getValue().inFlight();
            if (calls <= 0) {
                continue;
            }
            ClassHistogram small = least.getValue().histogram();
            ClassHistogram large = e.getValue().histogram();
            double perCall = (double) (large.totalBytes() - small.totalBytes()) / calls;
            double dataset = 0;
            for (ClassHistogram.PerCall row : ClassHistogram.perCall(small, large, calls, Integer.MAX_VALUE)) {
                if (row.className().startsWith("dev.vigilo.dataset.")) {
                    dataset += row.bytes();
                }
            }
            System.out.printf(
                    "%s: %,d calls in flight, %.1f MiB; %,.0f bytes per further call (dev.vigilo.dataset.* %,.0f);"
                            + " the largest classes per call:%n",
                    e.getKey(), e.getValue().inFlight(), large.totalBytes() / 1048576.0, perCall, dataset);
            for (ClassHistogram.PerCall row : ClassHistogram.perCall(small, large, calls, 16)) {
                System.out.printf("  %,9.0f B %7.1f objects  %s%n", row.bytes(), row.instances(), row.className());
            }
        }
    }

    private static void judgeMain(int cases, int epochs) throws Exception {
        Path work = Files.createTempDirectory("vigilo-bench-exec-");
        System.out.printf(
                "%d cores, work dir %s, worker concurrency %d, worker heap -Xmx256m; %,d cases x %d epoch(s) without"
                        + " and with a judge answering after %d ms%n",
                Runtime.getRuntime().availableProcessors(), work, CONCURRENCY, cases, epochs, JUDGE_LATENCY_MS);
        StorageConfig storage = StorageConfig.localDefault(work.resolve("objects"));
        try (ControlDatabase control = ControlDatabase.open(new ControlSettings.Embedded(work.resolve("postgres")));
                ObjectStore store = ObjectStores.open(storage.defaultStore());
                Placements placements = Placements.open(control, ExecutionConfig.defaults())) {
            new ExecutionBenchmark(work, control, store, placements).runJudge(cases, epochs);
        }
        deleteTree(work);
    }

    private static void claimsMain(int cases, int workers, int concurrency, int executionDatabases) throws Exception {
        Path work = Files.createTempDirectory("vigilo-bench-exec-");
        System.out.printf(
                "%d cores, work dir %s; %,d cases, %d worker processes x concurrency %d (%d claimers), trivial agent,"
                        + " %s%n",
                Runtime.getRuntime().availableProcessors(),
                work,
                cases,
                workers,
                concurrency,
                workers * concurrency,
                executionDatabases == 0
                        ? "execution records in the control database"
                        : executionDatabases + " execution database(s), each on its own embedded PostgreSQL server");
        StorageConfig storage = StorageConfig.localDefault(work.resolve("objects"));
        List<ControlDatabase> servers = new ArrayList<>();
        try (ControlDatabase control = ControlDatabase.open(new ControlSettings.Embedded(work.resolve("postgres")));
                ObjectStore store = ObjectStores.open(storage.defaultStore())) {
            List<ExecutionServer> executionServers = new ArrayList<>();
            ExecutionConfig config = ExecutionConfig.defaults();
            Optional<Path> configFile = Optional.empty();
            if (executionDatabases == 0) {
                executionServers.add(new ExecutionServer(
                        ExecutionConfig.CONTROL,
                        new PostgresCpu(work.resolve("postgres").resolve("data")),
                        control));
            } else {
                // Each execution database on a server of its own, as a deployment that spreads the bookkeeping
                // would have them; the embedded server is the same PostgreSQL as the control database's.
                Map<String, ExecutionConfig.Placement> placements = new java.util.TreeMap<>();
                StringBuilder toml = new StringBuilder("version = 1\n");
                for (int i = 1; i <= executionDatabases; i++) {
                    String alias = "x" + i;
                    Path dir = work.resolve("execution-" + i);
                    ControlDatabase server = ControlDatabase.open(new ControlSettings.Embedded(dir));
                    servers.add(server);
                    String url = server.jdbi()
                            .withHandle(h -> h.getConnection().getMetaData().getURL());
                    placements.put(
                            alias, new ExecutionConfig.Placement(alias, Optional.of(url), Optional.empty(), POOL));
                    toml.append("[placements.")
                            .append(alias)
                            .append("]\njdbc_url = \"")
                            .append(url)
                            .append("\"\npool_size = ")
                            .append(POOL)
                            .append('\n');
                    executionServers.add(new ExecutionServer(alias, new PostgresCpu(dir.resolve("data")), server));
                    System.out.println("execution database " + alias + ": " + url);
                }
                config = new ExecutionConfig("benchmark", placements);
                configFile = Optional.of(Files.writeString(work.resolve("execution.toml"), toml));
            }
            try (Placements placements = Placements.open(control, config)) {
                new ExecutionBenchmark(work, control, store, placements)
                        .runClaims(cases, workers, concurrency, executionServers, configFile);
            }
        } finally {
            servers.forEach(ControlDatabase::close);
        }
        // The embedded servers stop after their last client leaves, writing their statistics as they go: their data
        // directories can be deleted once their postmasters are gone.
        for (String server : List.of("postgres", "execution-1", "execution-2", "execution-3", "execution-4")) {
            Path pid = work.resolve(server).resolve("data").resolve("postmaster.pid");
            for (int i = 0; i < 600 && Files.exists(pid); i++) {
                Thread.sleep(100);
            }
        }
        deleteTree(work);
    }

    /** Connections each worker process may open to each execution database of the claims benchmark. */
    private static final int POOL = 8;

    /**
     * One execution database of the claims benchmark: its placement alias, its server's CPU, and a connection to the
     * server for the chunk counts and table statistics.
     */
    private record ExecutionServer(String alias, PostgresCpu cpu, ControlDatabase server) {
        long doneChunks(UUID run) {
            return server.jdbi()
                    .withHandle(h -> h.createQuery("SELECT count(*) FROM " + ExecutionConfig.SCHEMA
                                    + ".exec_chunks WHERE run_id = :r AND state = 'done'")
                            .bind("r", run)
                            .mapTo(Long.class)
                            .one());
        }
    }

    /**
     * {@code bench/run exec claims}: one run of {@code cases} cases executed by {@code workers} processes of
     * {@code concurrency} each, the agent answering at once, so the workers' database bookkeeping (claim, renewals,
     * completion, coordination) is what is measured: per execution database, its PostgreSQL's CPU time per chunk it
     * completed, read at every {@code window} chunks from the first to the last, beside chunks/s in that window, then
     * each chunk table's dead row versions, HOT updates, autovacuum runs and index sizes.
     */
    private void runClaims(
            int cases, int workers, int concurrency, List<ExecutionServer> servers, Optional<Path> executionConfig)
            throws Exception {
        Instant admissionStart = Instant.now();
        DatasetEntry dataset = upload("claims", cases);
        Instant uploaded = Instant.now();
        try (OpenAiTestServer llm = agent()) {
            CreateResult run = prepare(dataset, llm);
            Instant admitted = Instant.now();
            System.out.printf(
                    "upload %.1f s, run create (preparation and admission) %.1f s%n",
                    Duration.between(admissionStart, uploaded).toMillis() / 1000.0,
                    Duration.between(uploaded, admitted).toMillis() / 1000.0);
            long chunks = run.expectedChunks();
            long window = Math.max(100, Math.min(1_000, chunks / 10));
            AtomicLong done = new AtomicLong();
            List<WorkerProcess> ws = new ArrayList<>();
            String load = loadAverage();
            long[] cpu0 = new long[servers.size()];
            for (int s = 0; s < servers.size(); s++) {
                cpu0[s] = servers.get(s).cpu().millis().orElse(-1L);
            }
            long launched = System.nanoTime();
            for (int i = 0; i < workers; i++) {
                Path log = work.resolve("worker-" + ++logs + ".log");
                ws.add(WorkerProcess.start(
                        postgres, storeRoot, concurrency, 0, log, done, List.of("-Xmx256m"), executionConfig));
            }
            StringBuilder header = new StringBuilder(String.format("%n%-20s", "chunks completed"));
            for (ExecutionServer s : servers) {
                header.append(String.format(" %14s %10s", s.alias() + " CPU ms/ch", s.alias() + " ch/s"));
            }
            System.out.println(header.append(String.format(" %10s", "all ch/s")));
            long mark = 0;
            long[] cpuAt = cpu0.clone();
            long[] doneAt = new long[servers.size()];
            long wallAt = System.nanoTime();
            List<double[]> perChunk = new ArrayList<>();
            while (ws.stream().anyMatch(WorkerProcess::alive) || done.get() >= mark + window) {
                if (done.get() >= mark + window) {
                    long now = System.nanoTime();
                    double seconds = (now - wallAt) / 1e9;
                    long n = done.get() - mark;
                    StringBuilder line =
                            new StringBuilder(String.format("%-20s", String.format("%,d - %,d", mark, done.get())));
                    double[] ms = new double[servers.size()];
                    for (int s = 0; s < servers.size(); s++) {
                        long cpu = servers.get(s).cpu().millis().orElse(-1L);
                        long d = servers.get(s).doneChunks(run.runId());
                        // a server that completed few chunks in the window has no meaningful CPU per chunk in it
                        long inWindow = d - doneAt[s];
                        ms[s] = inWindow >= n / 10 && inWindow > 0 ? (cpu - cpuAt[s]) / (double) inWindow : Double.NaN;
                        line.append(String.format(
                                " %14s %10.0f",
                                Double.isNaN(ms[s]) ? "-" : String.format("%.2f", ms[s]), inWindow / seconds));
                        cpuAt[s] = cpu;
                        doneAt[s] = d;
                    }
                    perChunk.add(ms);
                    System.out.println(line.append(String.format(" %10.0f", n / seconds)));
                    mark = done.get();
                    wallAt = now;
                } else {
                    Thread.sleep(2);
                }
            }
            for (WorkerProcess w : ws) {
                if (!w.awaitExit(60) || w.exitValue() != 0) {
                    throw new IllegalStateException("a worker exited " + w.exitValue() + "; logs in " + work);
                }
            }
            double wall = (System.nanoTime() - launched) / 1e9;
            ExecutionStatus status = new ExecutionStatusReader(placements).status(run.runId());
            if (!status.status().equals("settled") || status.execution().casesDone() != run.cases()) {
                throw new IllegalStateException("run " + run.runId() + " ended " + status.status() + " with "
                        + status.execution().casesDone() + " of " + run.cases() + " cases done");
            }
            System.out.printf(
                    "%n%,d chunks settled in %.1f s from the workers' launch: %.0f chunks/s (%.0f cases/s) in all;"
                            + " load average %s -> %s%n",
                    chunks, wall, chunks / wall, run.cases() / wall, load, loadAverage());
            for (int s = 0; s < servers.size(); s++) {
                ExecutionServer server = servers.get(s);
                long total = server.cpu().millis().orElse(-1L) - cpu0[s];
                long mine = server.doneChunks(run.runId());
                int column = s;
                double[] windows = perChunk.stream()
                        .mapToDouble(w -> w[column])
                        .filter(v -> !Double.isNaN(v))
                        .toArray();
                double first = windows.length > 0 ? windows[0] : Double.NaN;
                double last = windows.length > 0 ? windows[windows.length - 1] : Double.NaN;
                System.out.printf(
                        "%s: %,d chunks (%.0f chunks/s); postgres CPU %.1f s, %.2f ms per chunk; first window %.2f,"
                                + " last window %.2f ms per chunk (ratio last / first %.2f)%n",
                        server.alias(),
                        mine,
                        mine / wall,
                        total / 1000.0,
                        total / (double) mine,
                        first,
                        last,
                        last / first);
                server.server().jdbi().useHandle(h -> {
                    h.createQuery("SELECT n_live_tup, n_dead_tup, n_tup_upd, n_tup_hot_upd, autovacuum_count,"
                                    + " pg_relation_size(relid) AS heap_bytes FROM pg_stat_user_tables"
                                    + " WHERE relname = 'exec_chunks'")
                            .mapToMap()
                            .forEach(m -> System.out.println("  exec_chunks: " + m));
                    h.createQuery("SELECT indexrelname, pg_relation_size(indexrelid) AS bytes, idx_scan, idx_tup_read"
                                    + " FROM pg_stat_user_indexes WHERE relname = 'exec_chunks' ORDER BY indexrelname")
                            .mapToMap()
                            .forEach(m -> System.out.println("    index: " + m));
                });
            }
        }
    }

    /** A judged run: its execution, and what the judge server saw of it. */
    private record Judged(Execution execution, int peakInFlight, int requests, long counted) {}

    /**
     * One worker over the run without a judge (A, the baseline) and with a judge on every case (B), A B B A, then the
     * heap of each.
     */
    private void runJudge(int cases, int epochs) throws Exception {
        DatasetEntry dataset = upload("judged", cases);
        String epochsKey = epochs > 1 ? "epochs: {count: " + epochs + ", reducer: majority}\n" : "";
        String profileA = PROFILE + epochsKey;
        List<Execution> a = new ArrayList<>();
        List<Judged> b = new ArrayList<>();
        for (boolean baseline : new boolean[] {true, false, false, true}) {
            if (baseline) {
                try (OpenAiTestServer llm = agent()) {
                    a.add(execute(prepare(dataset, llm, profileA), 1, 0));
                }
            } else {
                b.add(judged(dataset, epochsKey, 0));
            }
        }
        Execution heapA;
        try (OpenAiTestServer llm = agent()) {
            heapA = execute(prepare(dataset, llm, profileA), 1, HEAP_PROBE_SECONDS);
        }
        Judged heapB = judged(dataset, epochsKey, HEAP_PROBE_SECONDS);
        Execution bestA = a.stream()
                .max(Comparator.comparingDouble(Execution::casesPerSecond))
                .orElseThrow();
        Execution bestB = b.stream()
                .map(Judged::execution)
                .max(Comparator.comparingDouble(Execution::casesPerSecond))
                .orElseThrow();
        List<Judged> allB = new ArrayList<>(b);
        allB.add(heapB);
        int peak = allB.stream().mapToInt(Judged::peakInFlight).max().orElseThrow();
        System.out.printf(
                "%nJUDGE one worker, trivial http agent, %d cases at once, judge server in this JVM answering after %d"
                        + " ms%n",
                CONCURRENCY, JUDGE_LATENCY_MS);
        System.out.printf("%-58s %22s %22s%n", "", "without judge", "with judge");
        System.out.printf(
                "%-58s %22s %22s%n",
                epochs > 1
                        ? "executed epochs/s, launch to last chunk (best of 2)"
                        : "cases/s, launch to last chunk (best of 2)",
                rate(bestA.casesPerSecond() * epochs, bestA.seconds()),
                rate(bestB.casesPerSecond() * epochs, bestB.seconds()));
        System.out.printf(
                "%-58s %22s %22s%n",
                "  both runs",
                a.stream()
                        .map(x -> String.format("%,.0f", x.casesPerSecond() * epochs))
                        .toList(),
                b.stream()
                        .map(x -> String.format("%,.0f", x.execution().casesPerSecond() * epochs))
                        .toList());
        System.out.printf(
                "%-58s %22s %22s%n",
                "  first to last chunk (best run)",
                String.format("%,.0f", bestA.steadyCasesPerSecond() * epochs),
                String.format("%,.0f", bestB.steadyCasesPerSecond() * epochs));
        System.out.printf(
                "%-58s %45.3f%n", "ratio with / without judge", bestB.casesPerSecond() / bestA.casesPerSecond());
        System.out.printf(
                "%-58s %45s%n",
                "ceiling with the judge: concurrency / judge latency",
                String.format("%,.0f", CONCURRENCY * 1000.0 / JUDGE_LATENCY_MS));
        System.out.printf(
                "%-58s %45s%n",
                "peak judge requests in flight at the server, each run",
                allB.stream().map(j -> Integer.toString(j.peakInFlight())).toList());
        System.out.printf(
                "%-58s %45s%n",
                "  worker concurrency (the bound)",
                peak <= CONCURRENCY ? CONCURRENCY + ", held" : CONCURRENCY + ", EXCEEDED");
        System.out.printf(
                "%-58s %45s%n",
                "judge calls the run counted / the server answered",
                allB.stream().map(j -> j.counted() + " / " + j.requests()).toList());
        System.out.printf(
                "%-58s %22.1f %22.1f%n",
                "peak live heap of the worker (MiB)",
                heapA.peakHeapMiB(),
                heapB.execution().peakHeapMiB());
        System.out.printf(
                "%-58s %22s %22s%n",
                "worker CPU ms per executed epoch",
                String.format("%.3f", bestA.cpu().workers() / (double) (bestA.cases() * epochs)),
                String.format("%.3f", bestB.cpu().workers() / (double) (bestB.cases() * epochs)));
        System.out.printf(
                "%-58s %22s %22s%n",
                "this JVM's CPU ms per executed epoch (agent, judge)",
                String.format("%.3f", bestA.cpu().bench() / (double) (bestA.cases() * epochs)),
                String.format("%.3f", bestB.cpu().bench() / (double) (bestB.cases() * epochs)));
        if (peak > CONCURRENCY) {
            throw new IllegalStateException(
                    "judge requests in flight (" + peak + ") exceeded the worker's concurrency " + CONCURRENCY);
        }
    }

    /** A run with a judge on every case, executed by one worker against a fresh judge server. */
    private Judged judged(DatasetEntry dataset, String epochsKey, long heapProbeSeconds) throws Exception {
        try (OpenAiTestServer llm = agent();
                OpenAiTestServer judge = OpenAiTestServer.start()) {
            judge.answerWith(ExecutionBenchmark::judgement);
            // The judge's URL now, the agent's (%s) when the run is prepared.
            String profile = JUDGE_PROFILE.formatted("%s", judge.chatUrl()) + epochsKey;
            CreateResult run = prepare(dataset, llm, profile);
            Execution e = execute(run, 1, heapProbeSeconds);
            long counted = new ExecutionStatusReader(placements)
                    .status(run.runId())
                    .runUsage()
                    .map(u -> u.judges().calls())
                    .orElse(-1L);
            System.out.printf(
                    "  judge server: %,d requests, at most %d in flight; the run counted %,d judge calls%n",
                    judge.requestCount(), judge.peakInFlight(), counted);
            return new Judged(e, judge.peakInFlight(), judge.requestCount(), counted);
        }
    }

    /**
     * The judge: after {@value #JUDGE_LATENCY_MS} ms, 9 of 10 when the answer is the reference (the trivial agent's
     * always is), else 2, with a short reason and fixed usage.
     */
    private static Reply judgement(OpenAiTestServer.Request request) {
        String rubric = request.lastUserMessage();
        Matcher m = QUESTION.matcher(rubric);
        boolean right = m.find() && rubric.endsWith("Grade the answer " + Long.parseLong(m.group(1)) * 2 + ".");
        return Reply.judgement(right ? 9 : 2, right ? "states the reference answer" : "not the reference answer")
                .withModel("judge-model")
                .withUsage(60, 12)
                .withLatency(Duration.ofMillis(JUDGE_LATENCY_MS));
    }

    /** One worker over a run of one epoch (A) and one of several (B), A B B A, then the heap of each. */
    private void runEpochs(int cases, int epochs) throws Exception {
        DatasetEntry single = upload("single", cases);
        DatasetEntry several = upload("several", cases / epochs);
        String profileA = PROFILE;
        String profileB = PROFILE + "epochs: {count: " + epochs + ", reducer: majority}\n";
        List<Execution> a = new ArrayList<>();
        List<Execution> b = new ArrayList<>();
        for (boolean first : new boolean[] {true, false, false, true}) {
            try (OpenAiTestServer llm = agent()) {
                if (first) {
                    a.add(execute(prepare(single, llm, profileA), 1, 0));
                } else {
                    b.add(execute(prepare(several, llm, profileB), 1, 0));
                }
            }
        }
        Execution heapA;
        Execution heapB;
        try (OpenAiTestServer llm = agent()) {
            heapA = execute(prepare(single, llm, profileA), 1, HEAP_PROBE_SECONDS);
        }
        try (OpenAiTestServer llm = agent()) {
            heapB = execute(prepare(several, llm, profileB), 1, HEAP_PROBE_SECONDS);
        }
        Execution bestA = a.stream()
                .max(Comparator.comparingDouble(Execution::casesPerSecond))
                .orElseThrow();
        Execution bestB = b.stream()
                .max(Comparator.comparingDouble(Execution::casesPerSecond))
                .orElseThrow();
        double ratesA = bestA.casesPerSecond();
        double ratesB = bestB.cases() * (double) epochs / bestB.seconds();
        System.out.printf("%nEPOCHS one worker, trivial http agent, %d cases at once%n", CONCURRENCY);
        System.out.printf(
                "%-52s %22s %22s%n",
                "", String.format("%,d x 1 epoch", cases), String.format("%,d x %d", cases / epochs, epochs));
        System.out.printf(
                "%-52s %22s %22s%n",
                "executed epochs/s, launch to last chunk (best of 2)",
                rate(ratesA, bestA.seconds()),
                rate(ratesB, bestB.seconds()));
        System.out.printf(
                "%-52s %22s %22s%n",
                "  both runs",
                a.stream().map(x -> String.format("%,.0f", x.casesPerSecond())).toList(),
                b.stream()
                        .map(x -> String.format("%,.0f", x.cases() * (double) epochs / x.seconds()))
                        .toList());
        System.out.printf("%-52s %45.3f%n", "ratio epochs/s, several / one epoch", ratesB / ratesA);
        System.out.printf(
                "%-52s %22.1f %22.1f%n",
                "peak live heap of the worker (MiB)", heapA.peakHeapMiB(), heapB.peakHeapMiB());
        System.out.printf(
                "%-52s %22s %22s%n", "settlement (ms, each run)", settlements(a, heapA), settlements(b, heapB));
        System.out.printf(
                "%-52s %22s %22s%n",
                "worker CPU ms per executed epoch",
                String.format("%.3f", bestA.cpu().workers() / (double) cases),
                String.format("%.3f", bestB.cpu().workers() / (double) (bestB.cases() * epochs)));
    }

    private static String settlements(List<Execution> runs, Execution heap) {
        List<String> out = new ArrayList<>();
        for (Execution e : runs) {
            out.add(String.format("%.1f", e.settleMicros() / 1000.0));
        }
        out.add(String.format("%.1f", heap.settleMicros() / 1000.0));
        return String.join(" ", out);
    }

    /**
     * One execution of a run by some workers: {@code seconds} from their launch to the last completed chunk,
     * {@code steadySeconds} from the first completed chunk to the last, over which {@code steadyCases} completed.
     */
    private record Execution(
            long cases,
            double seconds,
            double steadySeconds,
            double peakHeapMiB,
            long steadyCases,
            Cpu cpu,
            long settleMicros,
            double peakRssMiB,
            double steadyCpuPerCase,
            double lateCpuPerCase,
            double lateJitPerCase,
            String load) {
        double casesPerSecond() {
            return cases / seconds;
        }

        /** Worker CPU milliseconds per case over the whole run (start-up included). */
        double cpuPerCase() {
            return cpu.workers() / (double) cases;
        }

        double steadyCasesPerSecond() {
            return steadyCases / steadySeconds;
        }
    }

    /**
     * CPU milliseconds spent over one measured phase: by the worker processes (all their threads), by the PostgreSQL
     * server (-1 when it could not be read) and by this JVM (the agent's server and the line readers; for the raw
     * baseline, the loops); and of the workers' CPU, their compiler threads' ({@code jit}) and garbage collector
     * threads' ({@code gc}), -1 when unknown.
     */
    private record Cpu(long workers, long postgres, long bench, long jit, long gc) {
        Cpu(long workers, long postgres, long bench) {
            this(workers, postgres, bench, -1, -1);
        }

        String perCase(long cases) {
            return String.format(
                    "%.2f / %s / %.2f",
                    workers / (double) cases,
                    postgres < 0 ? "?" : String.format("%.2f", postgres / (double) cases),
                    bench / (double) cases);
        }
    }

    /**
     * Resume timings of one restarted worker: wall milliseconds from its launch to main, to ready (control database
     * joined), to its first claimed chunk lease and to its first completed chunk (its first durably executed cases),
     * and its process CPU milliseconds at ready and at the first chunk.
     */
    private record Restart(long main, long ready, long claim, long firstChunk, long readyCpu, long firstChunkCpu) {}

    private void run(int cases, int small) throws Exception {
        DatasetEntry large = upload("large", cases);
        DatasetEntry smallSet = upload("small", small);
        List<CaseFileSpan> caseFiles = DatasetReader.open(large, store).caseFilesInRange(0, large.caseCount());

        double raw1;
        double raw4;
        Cpu rawCpu1;
        Cpu rawCpu4;
        Execution vigilo1;
        try (OpenAiTestServer llm = agent()) {
            CreateResult one = prepare(large, llm);
            RawClaimBaseline baseline = new RawClaimBaseline(control.jdbi(), storeRoot, chunks(one), caseFiles);
            String load = loadAverage();
            long cpu0 = ExecutionWorkerMain.cpuMillis();
            long pg0 = pgCpu.millis().orElse(-1L);
            raw1 = baseline.run(1);
            rawCpu1 = new Cpu(0, delta(pg0), ExecutionWorkerMain.cpuMillis() - cpu0);
            System.out.printf(
                    "raw baseline, 1 loop: %,.0f cases/s (load average %s -> %s); CPU ms per case, workers / postgres"
                            + " / this JVM: %s%n",
                    raw1, load, loadAverage(), rawCpu1.perCase(cases));
            vigilo1 = execute(one, 1, 0);
            load = loadAverage();
            cpu0 = ExecutionWorkerMain.cpuMillis();
            pg0 = pgCpu.millis().orElse(-1L);
            raw4 = baseline.run(4);
            rawCpu4 = new Cpu(0, delta(pg0), ExecutionWorkerMain.cpuMillis() - cpu0);
            System.out.printf(
                    "raw baseline, 4 loops: %,.0f cases/s (load average %s -> %s); CPU ms per case, workers /"
                            + " postgres / this JVM: %s%n",
                    raw4, load, loadAverage(), rawCpu4.perCase(cases));
            baseline.drop();
        }
        Execution vigilo4;
        try (OpenAiTestServer llm = agent()) {
            vigilo4 = execute(prepare(large, llm), 4, 0);
        }
        Execution smallHeap;
        Execution largeHeap;
        try (OpenAiTestServer llm = agent()) {
            smallHeap = execute(prepare(smallSet, llm), 1, HEAP_PROBE_SECONDS);
        }
        try (OpenAiTestServer llm = agent()) {
            largeHeap = execute(prepare(large, llm), 1, HEAP_PROBE_SECONDS);
        }
        Restart[] at10;
        try (OpenAiTestServer llm = agent()) {
            at10 = resume(prepare(large, llm), 0.10);
        }
        Restart[] at90;
        try (OpenAiTestServer llm = agent()) {
            at90 = resume(prepare(large, llm), 0.90);
        }
        Redone redone;
        try (OpenAiTestServer llm = agent()) {
            redone = redone(prepare(smallSet, llm), llm, 0.50);
        }

        long chunks = (cases + 99) / 100;
        System.out.printf(
                "%nEXECUTION %,d cases (%,d chunks), trivial http agent, %d cases at once per worker, 2 cores%n",
                cases, chunks, CONCURRENCY);
        System.out.printf("%-44s %18s %18s%n", "", "1 worker", "4 workers");
        System.out.printf(
                "%-44s %18s %18s%n",
                "vigilo cases/s, launch to last chunk (s)",
                rate(vigilo1.casesPerSecond(), vigilo1.seconds()),
                rate(vigilo4.casesPerSecond(), vigilo4.seconds()));
        System.out.printf(
                "%-44s %18s %18s%n",
                "vigilo cases/s, first to last chunk",
                String.format("%,.0f", vigilo1.steadyCasesPerSecond()),
                String.format("%,.0f", vigilo4.steadyCasesPerSecond()));
        System.out.printf(
                "%-44s %18s %18s%n",
                "raw claim + read + hash, 1 / 4 loops", String.format("%,.0f", raw1), String.format("%,.0f", raw4));
        System.out.printf(
                "%-44s %18.3f %18.3f%n",
                "ratio vigilo (launch to last) / raw",
                vigilo1.casesPerSecond() / raw1,
                vigilo4.casesPerSecond() / raw4);
        System.out.printf(
                "%-44s %18.3f %18.3f%n",
                "ratio vigilo (first to last) / raw",
                vigilo1.steadyCasesPerSecond() / raw1,
                vigilo4.steadyCasesPerSecond() / raw4);
        System.out.printf(
                "%-44s %18s %18s%n",
                "vigilo CPU ms/case: workers / postgres / agent",
                vigilo1.cpu().perCase(vigilo1.cases()),
                vigilo4.cpu().perCase(vigilo4.cases()));
        System.out.printf(
                "%-44s %18s %18s%n",
                "raw CPU ms/case: - / postgres / loops", rawCpu1.perCase(cases), rawCpu4.perCase(cases));
        System.out.printf(
                "%-44s %18s %18s%n",
                "peak RSS of a worker (MiB)",
                String.format("%.1f", vigilo1.peakRssMiB()),
                String.format("%.1f", vigilo4.peakRssMiB()));
        System.out.printf(
                "HEAP   one worker, peak live heap (full GC every %d s): %,d cases %.1f MiB, %,d cases %.1f MiB,"
                        + " ratio %.2f%n",
                HEAP_PROBE_SECONDS,
                small,
                smallHeap.peakHeapMiB(),
                cases,
                largeHeap.peakHeapMiB(),
                largeHeap.peakHeapMiB() / smallHeap.peakHeapMiB());
        long r10 = median(at10, Restart::firstChunk);
        long r90 = median(at90, Restart::firstChunk);
        long c10 = median(at10, Restart::claim);
        long c90 = median(at90, Restart::claim);
        System.out.printf(
                "RESUME one worker restarted after all were killed, launch to its first completed chunk (median of"
                        + " %d): at 10%% %.2f s, at 90%% %.2f s, ratio 90%%/10%% %.2f; launch to its first claim: %.2f s"
                        + " and %.2f s%n",
                at10.length, r10 / 1000.0, r90 / 1000.0, (double) r90 / r10, c10 / 1000.0, c90 / 1000.0);
        System.out.println("       10%: " + restarts(at10));
        System.out.println("       90%: " + restarts(at90));
        System.out.printf(
                "REDONE 4 workers killed at %.0f%% of %,d cases, one restarted worker to the end: %,d requests redone"
                        + " (%.2f%% of the run's cases; requests the agent's server received beyond one per case),"
                        + " launch to its first agent call %.2f s, to its first claim %.2f s%n",
                redone.fraction() * 100,
                redone.cases(),
                redone.requestsRedone(),
                100.0 * redone.requestsRedone() / redone.cases(),
                redone.firstCallMillis() / 1000.0,
                redone.firstClaimMillis() / 1000.0);
        System.out.printf(
                "SUMMARY %,d cases, 1 worker: %,.0f cases/s (launch to last chunk), %.3f worker CPU ms per case"
                        + " (steady state %.3f), peak RSS %.1f MiB; after a kill of every worker: %,d requests redone of %,d cases%n",
                cases,
                vigilo1.casesPerSecond(),
                vigilo1.cpu().workers() / (double) vigilo1.cases(),
                vigilo1.steadyCpuPerCase(),
                vigilo1.peakRssMiB(),
                redone.requestsRedone(),
                redone.cases());
    }

    /**
     * What a kill of every worker costs in requests: the agent's server received {@code cases + requestsRedone}
     * requests for a run whose every case needs exactly one (one attempt, no errors), so every request beyond one per
     * case is work a killed worker did and lost. {@code firstCallMillis} and {@code firstClaimMillis}: from the
     * restarted worker's launch to the first request the server received from it and to its first claim.
     */
    private record Redone(
            double fraction, long cases, long requestsRedone, long firstCallMillis, long firstClaimMillis) {}

    /**
     * Runs 4 workers until {@code fraction} of the run's chunks are done, kills them all with SIGKILL, then starts
     * one worker that finishes the run (it exits once the run is settled), and counts the requests the agent's server
     * received beyond one per case.
     */
    private Redone redone(CreateResult run, OpenAiTestServer llm, double fraction) throws Exception {
        java.util.concurrent.atomic.AtomicBoolean armed = new java.util.concurrent.atomic.AtomicBoolean();
        AtomicLong firstCall = new AtomicLong();
        llm.answerWith(request -> {
            if (armed.get()) {
                firstCall.compareAndSet(0, System.currentTimeMillis());
            }
            return answer(request);
        });
        AtomicLong done = new AtomicLong();
        List<WorkerProcess> ws = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            ws.add(startWorker(done, 0));
        }
        long target = (long) Math.ceil(run.expectedChunks() * fraction);
        long until = System.nanoTime() + Duration.ofHours(1).toNanos();
        while (done.get() < target && System.nanoTime() < until) {
            Thread.sleep(5);
        }
        for (WorkerProcess w : ws) {
            w.kill();
        }
        long killedAt = done.get();
        armed.set(true);
        WorkerProcess w = startWorker(done, 0);
        if (!w.awaitExit(3600) || w.exitValue() != 0) {
            kill(w);
            throw new IllegalStateException("the restarted worker did not finish the run; logs in " + work);
        }
        ExecutionStatus status = new ExecutionStatusReader(placements).status(run.runId());
        if (!status.status().equals("settled") || status.execution().casesDone() != run.cases()) {
            throw new IllegalStateException("run " + run.runId() + " ended " + status.status() + " with "
                    + status.execution().casesDone() + " of " + run.cases() + " cases done");
        }
        long redone = llm.requestCount() - run.cases();
        System.out.printf(
                "killed 4 workers with %,d of %,d chunks done; the restarted worker finished the run: %,d requests"
                        + " for %,d cases; load average %s%n",
                killedAt, run.expectedChunks(), llm.requestCount(), run.cases(), loadAverage());
        return new Redone(
                fraction,
                run.cases(),
                redone,
                firstCall.get() == 0 ? -1 : firstCall.get() - w.launchedAt(),
                w.claimAt() == 0 ? -1 : w.claimAt() - w.launchedAt());
    }

    private static String rate(double perSecond, double seconds) {
        return String.format("%,.0f (%.1f)", perSecond, seconds);
    }

    private static String restarts(Restart[] rs) {
        StringBuilder sb = new StringBuilder();
        for (Restart r : rs) {
            sb.append(String.format(
                    "[jvm start %d ms, join control db %d ms (cpu %d ms), to first claim %d ms, first chunk executed"
                            + " %d ms (cpu from ready %d ms)] ",
                    r.main(),
                    r.ready() - r.main(),
                    r.readyCpu(),
                    r.claim() - r.ready(),
                    r.firstChunk() - r.claim(),
                    r.firstChunkCpu() - r.readyCpu()));
        }
        return sb.toString().trim();
    }

    private static long median(Restart[] rs, ToLongFunction<Restart> f) {
        long[] v = Arrays.stream(rs).mapToLong(f).sorted().toArray();
        return v[v.length / 2];
    }

    /** The trivial agent: answers "what is N * 2" with 2N at once. */
    private static OpenAiTestServer agent() {
        OpenAiTestServer llm = OpenAiTestServer.start();
        llm.answerWith(ExecutionBenchmark::answer);
        return llm;
    }

    private DatasetEntry upload(String name, int cases) throws IOException {
        Path file = work.resolve(name + ".jsonl");
        try (BufferedWriter w = Files.newBufferedWriter(file)) {
            for (int i = 0; i < cases; i++) {
                String group = i % 3 == 0 ? ",\"group\":\"math\"" : "";
                w.write("{\"id\":\"case-" + i + "\",\"input\":\"what is " + i + " * 2\",\"expected\":\"" + (i * 2L)
                        + "\"" + group + "}\n");
            }
        }
        long t0 = System.nanoTime();
        DatasetEntry e = new DatasetCatalog(control.jdbi())
                .upload(new UploadRequest(file, Optional.of(name), Optional.empty()), store, UploadProgress.NONE);
        System.out.printf("uploaded %s: %,d cases in %.1f s%n", name, cases, (System.nanoTime() - t0) / 1e9);
        Files.delete(file);
        return e;
    }

    /** {@code run create} with execution requested, then admission: the run is pending when this returns. */
    private CreateResult prepare(DatasetEntry dataset, OpenAiTestServer llm) {
        return prepare(dataset, llm, PROFILE);
    }

    /** As {@link #prepare(DatasetEntry, OpenAiTestServer)} with {@code profile} (its agent URL a %s). */
    private CreateResult prepare(DatasetEntry dataset, OpenAiTestServer llm, String profile) {
        long t0 = System.nanoTime();
        CreateResult r = new RunPreparation(control.jdbi(), storage)
                .create(new CreateRequest(
                        ProfileInput.inline(profile.formatted(llm.chatUrl())),
                        dataset.uploadId(),
                        Optional.of(UUID.randomUUID()),
                        false,
                        placements.config().aliases()));
        long t1 = System.nanoTime();
        Admission.Result a = new Admission(placements, storage).admit(r.runId());
        if (!a.status().equals("pending")) {
            throw new IllegalStateException("run " + r.runId() + " is " + a.status() + " after admission");
        }
        System.out.printf(
                "run %s: %,d cases, %,d chunks; prepared in %.1f s, admitted in %.1f s%n",
                r.runId(), r.cases(), r.expectedChunks(), (t1 - t0) / 1e9, (System.nanoTime() - t1) / 1e9);
        return r;
    }

    /** The run's chunks, read from its published plan. */
    private List<PublishedPlan.ChunkRef> chunks(CreateResult run) {
        List<PublishedPlan.ChunkRef> out = new ArrayList<>();
        PublishedPlan.open(run.runId(), run.root(), store, Deadline.after(Duration.ofMinutes(5)))
                .forEachChunk(0, Deadline.after(Duration.ofMinutes(5)), out::add);
        return out;
    }

    private WorkerProcess startWorker(AtomicLong runChunks, long heapProbeSeconds) throws IOException {
        return startWorker(runChunks, heapProbeSeconds, List.of("-Xmx256m"));
    }

    private WorkerProcess startWorker(AtomicLong runChunks, long heapProbeSeconds, List<String> heap)
            throws IOException {
        Path log = work.resolve("worker-" + ++logs + ".log");
        return WorkerProcess.start(
                postgres, storeRoot, CONCURRENCY, heapProbeSeconds, log, runChunks, heap, Optional.empty());
    }

    /** Milliseconds from {@code from} to {@code at}, or "-" when {@code at} never happened (0). */
    private static String since(long from, long at) {
        return at == 0 ? "-" : String.format("%,d", at - from);
    }

    /** PostgreSQL's CPU milliseconds since {@code before} (-1 when either reading failed). */
    private long delta(long before) {
        long now = pgCpu.millis().orElse(-1L);
        return before < 0 || now < 0 ? -1 : now - before;
    }

    /** The 1-minute load average of the machine (other processes compete for its 2 cores). */
    private static String loadAverage() {
        try {
            return Files.readString(Path.of("/proc/loadavg")).split(" ")[0];
        } catch (IOException | RuntimeException e) {
            return "?";
        }
    }

    /**
     * Executes the whole run with {@code workers} worker processes, which exit once it is settled; with
     * {@code heapProbeSeconds > 0} they measure their peak live heap.
     */
    private Execution execute(CreateResult run, int workers, long heapProbeSeconds) throws Exception {
        return execute(run, workers, heapProbeSeconds, List.of("-Xmx256m"));
    }

    /** As above, the workers started with the heap options {@code heap} (empty: the JVM's default). */
    private Execution execute(CreateResult run, int workers, long heapProbeSeconds, List<String> heap)
            throws Exception {
        return execute(run, workers, heapProbeSeconds, heap, System.getProperty("java.class.path"));
    }

    /** As above, the workers' classes from {@code classpath}. */
    private Execution execute(CreateResult run, int workers, long heapProbeSeconds, List<String> heap, String classpath)
            throws Exception {
        AtomicLong done = new AtomicLong();
        List<WorkerProcess> ws = new ArrayList<>();
        String load = loadAverage();
        long benchCpu = ExecutionWorkerMain.cpuMillis();
        long pg0 = pgCpu.millis().orElse(-1L);
        for (int i = 0; i < workers; i++) {
            Path log = work.resolve("worker-" + ++logs + ".log");
            ws.add(WorkerProcess.start(
                    postgres, storeRoot, CONCURRENCY, heapProbeSeconds, log, done, heap, Optional.empty(), classpath));
        }
        for (WorkerProcess w : ws) {
            if (!w.awaitExit(3600)) {
                ws.forEach(x -> kill(x));
                throw new IllegalStateException("a worker did not finish within an hour; logs in " + work);
            }
            if (w.exitValue() != 0) {
                throw new IllegalStateException("a worker exited " + w.exitValue() + "; logs in " + work);
            }
        }
        Cpu cpu = new Cpu(
                ws.stream().mapToLong(WorkerProcess::cpuMillis).sum(),
                delta(pg0),
                ExecutionWorkerMain.cpuMillis() - benchCpu,
                ws.stream().mapToLong(WorkerProcess::jitMillis).sum(),
                ws.stream().mapToLong(WorkerProcess::gcMillis).sum());
        ExecutionStatus status = new ExecutionStatusReader(placements).status(run.runId());
        if (!status.status().equals("settled") || status.execution().casesDone() != run.cases()) {
            throw new IllegalStateException("run " + run.runId() + " ended " + status.status() + " with "
                    + status.execution().casesDone() + " of " + run.cases() + " cases done");
        }
        long launched = ws.stream().mapToLong(WorkerProcess::launchedAt).min().orElseThrow();
        long first = ws.stream()
                .mapToLong(WorkerProcess::firstChunkAt)
                .filter(t -> t > 0)
                .min()
                .orElseThrow();
        long last = ws.stream().mapToLong(WorkerProcess::lastChunkAt).max().orElseThrow();
        long firstCases = run.cases() / run.expectedChunks(); // cases completed at the first completion, about
        double peak = ws.stream().mapToLong(WorkerProcess::peakHeapBytes).max().orElseThrow() / 1048576.0;
        long settle = ws.stream().mapToLong(WorkerProcess::settledMicros).max().orElse(-1);
        double rss = ws.stream().mapToLong(WorkerProcess::peakRssBytes).max().orElseThrow() / 1048576.0;
        long steadyCpu = 0;
        long steadyChunks = 0;
        for (WorkerProcess w : ws) {
            long[] s = w.steadyCpu();
            steadyCpu += s[0];
            steadyChunks += s[1];
        }
        double casesPerChunk = run.cases() / (double) run.expectedChunks();
        long lateCpu = 0;
        long lateJit = 0;
        long lateChunks = 0;
        for (WorkerProcess w : ws) { // the second half of each worker's chunks
            long[] l = w.windowCpu(w.chunksCompleted() / 2);
            lateCpu += l[0];
            lateJit = lateJit < 0 || l[1] < 0 ? -1 : lateJit + l[1];
            lateChunks += l[2];
        }
        String endLoad = loadAverage();
        Execution e = new Execution(
                run.cases(),
                (last - launched) / 1000.0,
                (last - first) / 1000.0,
                peak,
                run.cases() - firstCases,
                cpu,
                settle,
                rss,
                steadyChunks == 0 ? Double.NaN : steadyCpu / (steadyChunks * casesPerChunk),
                lateChunks == 0 ? Double.NaN : lateCpu / (lateChunks * casesPerChunk),
                lateChunks == 0 || lateJit < 0 ? Double.NaN : lateJit / (lateChunks * casesPerChunk),
                load + " -> " + endLoad);
        System.out.printf(
                "%d worker(s)%s: %,d cases in %.1f s from launch (%,.0f cases/s), %,.0f cases/s from the first"
                        + " completed chunk to the last; verdict %s; load average %s -> %s; CPU: workers %.1f s,"
                        + " postgres %.1f s, this JVM (the agent's server, reading lines) %.1f s; peak RSS of a"
                        + " worker %.1f MiB; steady-state worker CPU %.3f ms per case; second half of the chunks %.3f ms per"
                        + " case, of which JIT compiler threads %.3f%n",
                workers,
                heapProbeSeconds > 0 ? String.format(" (peak live heap %.1f MiB)", peak) : "",
                run.cases(),
                e.seconds(),
                e.casesPerSecond(),
                e.steadyCasesPerSecond(),
                status.verdict().orElse("-"),
                load,
                endLoad,
                cpu.workers() / 1000.0,
                cpu.postgres() / 1000.0,
                cpu.bench() / 1000.0,
                rss,
                e.steadyCpuPerCase(),
                e.lateCpuPerCase(),
                e.lateJitPerCase());
        for (WorkerProcess w : ws) {
            long at = w.launchedAt();
            System.out.printf(
                    "  worker: jvm start %d ms, join control db %d ms (cpu %d ms), first claim %s ms and first chunk"
                            + " %s ms after launch (cpu %d ms), last chunk %s ms; cpu %.1f s (JIT compiler threads"
                            + " %.1f s, GC threads %.1f s); agent time %.2f ms per case; %s%n",
                    w.mainAt() - at,
                    w.readyAt() - w.mainAt(),
                    w.readyCpu(),
                    since(at, w.claimAt()),
                    since(at, w.firstChunkAt()),
                    w.firstChunkCpu(),
                    since(at, w.lastChunkAt()),
                    w.cpuMillis() / 1000.0,
                    w.jitMillis() / 1000.0,
                    w.gcMillis() / 1000.0,
                    w.casesExecuted() == 0 ? 0.0 : (double) w.agentMillis() / w.casesExecuted(),
                    w.report());
        }
        return e;
    }

    /**
     * Runs 4 workers until {@code fraction} of the chunks are done, kills them all, then three times starts one
     * worker, takes the time to its first completed chunk, and kills it. Cancels the run afterwards.
     */
    private Restart[] resume(CreateResult run, double fraction) throws Exception {
        AtomicLong done = new AtomicLong();
        List<WorkerProcess> ws = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            ws.add(startWorker(done, 0));
        }
        long target = (long) Math.ceil(run.expectedChunks() * fraction);
        long until = System.nanoTime() + Duration.ofHours(1).toNanos();
        while (done.get() < target && System.nanoTime() < until) {
            Thread.sleep(5);
        }
        for (WorkerProcess w : ws) {
            w.kill();
        }
        System.out.printf(
                "killed 4 workers with %,d of %,d chunks done (target %.0f%%)%n",
                done.get(), run.expectedChunks(), fraction * 100);
        Restart[] out = new Restart[3];
        for (int i = 0; i < out.length; i++) {
            WorkerProcess w = startWorker(done, 0);
            if (!w.awaitFirstChunk(600)) {
                kill(w);
                throw new IllegalStateException("a restarted worker completed no chunk (too few chunks left to"
                        + " claim, or 10 minutes passed); logs in " + work);
            }
            w.kill();
            long at = w.launchedAt();
            out[i] = new Restart(
                    w.mainAt() - at,
                    w.readyAt() - at,
                    w.claimAt() - at,
                    w.firstChunkAt() - at,
                    w.readyCpu(),
                    w.firstChunkCpu());
            System.out.printf(
                    "restart %d: first chunk %.2f s after launch (%,d chunks done; load average %s)%n",
                    i + 1, out[i].firstChunk() / 1000.0, done.get(), loadAverage());
        }
        new RunCancellation(placements).cancel(run.runId());
        return out;
    }

    private static void kill(WorkerProcess w) {
        try {
            w.kill();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static Reply answer(OpenAiTestServer.Request request) {
        Matcher m = QUESTION.matcher(request.lastUserMessage());
        return Reply.content(m.find() ? Long.toString(Long.parseLong(m.group(1)) * 2) : "unknown");
    }

    private static void deleteTree(Path root) throws IOException {
        if (!Files.exists(root)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(root)) {
            for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }
}
