package dev.vigilo.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.vigilo.agent.OpenAiTestServer;
import dev.vigilo.agent.OpenAiTestServer.Reply;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * An evaluation end to end as a user runs it (issue 27, "fixed cost"): the repository's {@code vigilo} launcher, in a
 * fresh Vigilo home on the embedded defaults (embedded PostgreSQL and the local object store under the home), runs
 * {@code vigilo dataset upload FILE}, {@code vigilo run create --profile-file P --dataset-upload-id ID} and
 * {@code vigilo worker --concurrency C --exit-when-idle}, one after the other, against an OpenAI-compatible test
 * server in this JVM ({@link OpenAiTestServer}) that answers every case after {@code LATENCY_MS}.
 *
 * <p>Per command: wall time and CPU time (the command's JVM and whatever it waited for: the kernel adds a reaped
 * child's time to this JVM's {@code cutime}/{@code cstime}). Beside them the CPU of the embedded server's detached
 * host JVM and of PostgreSQL, read before the server stops (they belong to no command). The execution phase is the
 * time from the agent's first request to its last answer (the server's clock); the worker's wall time splits into
 * its start (launch to first request), the execution phase and its end (last answer to exit: settlement and the
 * idle check). End to end is from the upload's launch to the worker's exit; the goal is at most 1.5x the execution
 * phase.
 *
 * <p>Each repetition runs two evaluations: the first in a new Vigilo home (class-data archive recorded, PostgreSQL
 * binaries unpacked, database initialized) and, once the embedded server has stopped by itself after its idle grace,
 * a second in the same home (the usual case: a later evaluation). With several launchers ({@code
 * -Dvigilo.launchers=A,B}, e.g. the base build's next to this one) the repetitions alternate A B B A ..., so both
 * see the same machine.
 *
 * <p>Each repetition then also runs a later evaluation as one command, {@code vigilo eval --profile-file P --dataset
 * FILE --concurrency C} (row {@code eval}, in turns before and after the three-command one): one JVM and one join of
 * the embedded server; its start is launch to first request (upload and create included). Right after it, without
 * waiting for the server to stop, the same again (row {@code eval-up}): an evaluation that finds the embedded server
 * running, as one within the server's idle grace or against a PostgreSQL server of one's own does (the host's and
 * PostgreSQL's CPU are then what grew during the evaluation).
 *
 * <p>Run: {@code bench/run exec endtoend [CASES=2000] [LATENCY_MS=50] [CONCURRENCY=64] [REPETITIONS=3]}.
 */
public final class EndToEndBenchmark {
    private static final ObjectMapper MAPPER = new ObjectMapper();
    private static final Pattern QUESTION = Pattern.compile("what is (\\d+) \\* 2");
    /** The clock ticks of {@code /proc} times ({@code getconf CLK_TCK}: 100 on Linux). */
    private static final long TICKS_PER_SECOND = 100;

    private static final String PROFILE = """
            name: endtoend-bench
            agent: {kind: http, url: "%s", model: bench, max_attempts: 1, timeout_seconds: 30}
            evaluators:
              - {name: exact, kind: exact_match}
            gates:
              - {name: all, required_evaluators: [exact], min_pass_rate: 0.9}
            """;

    /** One command's figures. */
    record Command(String name, double wallSeconds, double cpuSeconds, String output) {}

    /** One evaluation: its commands, the execution phase and the server-side CPU. */
    record Evaluation(
            String launcher,
            String home,
            List<Command> commands,
            double endToEndSeconds,
            double executionSeconds,
            double workerStartSeconds,
            double workerEndSeconds,
            double hostCpuSeconds,
            double postgresCpuSeconds,
            String load) {
        double ratio() {
            return endToEndSeconds / executionSeconds;
        }

        double commandCpuSeconds() {
            return commands.stream().mapToDouble(Command::cpuSeconds).sum();
        }
    }

    private final int cases;
    private final long latencyMillis;
    private final int concurrency;
    private final Path work;

    private EndToEndBenchmark(int cases, long latencyMillis, int concurrency, Path work) {
        this.cases = cases;
        this.latencyMillis = latencyMillis;
        this.concurrency = concurrency;
        this.work = work;
    }

    /** Entry point: {@code [CASES] [LATENCY_MS] [CONCURRENCY] [REPETITIONS]}. */
    public static void main(String[] args) throws Exception {
        int cases = args.length > 0 ? Integer.parseInt(args[0]) : 2_000;
        long latency = args.length > 1 ? Long.parseLong(args[1]) : 50;
        int concurrency = args.length > 2 ? Integer.parseInt(args[2]) : 64;
        int repetitions = args.length > 3 ? Integer.parseInt(args[3]) : 3;
        String launchers = System.getProperty("vigilo.launchers", System.getProperty("vigilo.launcher", ""));
        List<String> names = new ArrayList<>();
        for (String l : launchers.split(",")) {
            if (!l.isBlank()) {
                if (!Files.isExecutable(Path.of(l.trim()))) {
                    throw new IllegalStateException("not an executable launcher: " + l);
                }
                names.add(l.trim());
            }
        }
        if (names.isEmpty()) {
            throw new IllegalStateException("pass -Dvigilo.launchers=<repository>/vigilo[,<other>/vigilo]");
        }
        Path work = Files.createTempDirectory("vigilo-bench-e2e-");
        System.out.printf(
                "%d cores, java %s, work dir %s; %,d cases, agent latency %d ms, worker concurrency %d, %d"
                        + " repetition(s) of: new home, then the same home again%n",
                Runtime.getRuntime().availableProcessors(),
                System.getProperty("java.version"),
                work,
                cases,
                latency,
                concurrency,
                repetitions);
        for (int i = 0; i < names.size(); i++) {
            System.out.printf("launcher %c: %s%n", 'A' + i, names.get(i));
        }
        EndToEndBenchmark bench = new EndToEndBenchmark(cases, latency, concurrency, work);
        Path dataset = bench.writeDataset();
        List<Evaluation> all = new ArrayList<>();
        for (int r = 0; r < repetitions; r++) {
            // A B, then B A: each launcher meets the machine's drift in both positions.
            List<Integer> order = new ArrayList<>();
            for (int i = 0; i < names.size(); i++) {
                order.add(r % 2 == 0 ? i : names.size() - 1 - i);
            }
            for (int i : order) {
                String label = String.valueOf((char) ('A' + i));
                Path home = work.resolve("home-" + label + "-" + r);
                all.add(bench.evaluate(label, names.get(i), home, dataset, "new"));
                bench.awaitServerStopped(home);
                // A later evaluation both ways, in turns: three commands, and `vigilo eval` (one command, one JVM);
                // `eval` is followed at once by `eval-up`, another while the embedded server still runs (as with a
                // PostgreSQL server of one's own, or evaluations within the server's idle grace).
                List<String> kinds =
                        r % 2 == 0 ? List.of("again", "eval", "eval-up") : List.of("eval", "eval-up", "again");
                for (int k = 0; k < kinds.size(); k++) {
                    String kind = kinds.get(k);
                    all.add(
                            kind.startsWith("eval")
                                    ? bench.evaluateInOne(label, names.get(i), home, dataset, kind)
                                    : bench.evaluate(label, names.get(i), home, dataset, kind));
                    if (k + 1 == kinds.size() || !kinds.get(k + 1).equals("eval-up")) {
                        bench.awaitServerStopped(home);
                    }
                }
                deleteTree(home);
            }
        }
        printSummary(all, cases);
        deleteTree(work);
    }

    private Path writeDataset() throws IOException {
        Path file = work.resolve("cases.jsonl");
        try (BufferedWriter w = Files.newBufferedWriter(file)) {
            for (int i = 0; i < cases; i++) {
                w.write("{\"id\":\"case-" + i + "\",\"input\":\"what is " + i + " * 2\",\"expected\":\"" + (i * 2L)
                        + "\"}\n");
            }
        }
        return file;
    }

    /**
     * What an evaluation's commands did: the commands measured, when the command that executes the cases was
     * launched and when the last one ended ({@link System#nanoTime()}), the command whose output explains unanswered
     * cases, and the check that the run settled.
     */
    private record Phase(List<Command> commands, long launched, long end, Command executing, SettledCheck settled) {}

    /** Throws when the evaluation's run did not settle. */
    private interface SettledCheck {
        void check() throws Exception;
    }

    /** Runs an evaluation's commands against the profile in {@code env}'s home; {@code t0} is when they start. */
    private interface Commands {
        Phase run(Path profile, Map<String, String> env, long t0) throws Exception;
    }

    /** A new or later evaluation as three commands: upload, run create, worker --exit-when-idle. */
    private Evaluation evaluate(String label, String launcher, Path home, Path dataset, String kind) throws Exception {
        Files.createDirectories(home);
        return measure(label, kind, home, (profile, env, t0) -> {
            List<Command> commands = new ArrayList<>();
            Command upload = run(
                    "upload", env, launcher, "dataset", "upload", dataset.toString(), "--name", "endtoend", "--json");
            commands.add(upload);
            String uploadId = json(upload).path("upload_id").asText();
            Command create = run(
                    "create",
                    env,
                    launcher,
                    "run",
                    "create",
                    "--profile-file",
                    profile.toString(),
                    "--dataset-upload-id",
                    uploadId,
                    "--json");
            commands.add(create);
            String runId = json(create).path("run_id").asText();
            long workerLaunch = System.nanoTime();
            Command worker = run(
                    "worker",
                    env,
                    launcher,
                    "worker",
                    "--concurrency",
                    Integer.toString(concurrency),
                    "--exit-when-idle");
            long end = System.nanoTime();
            commands.add(worker);
            return new Phase(commands, workerLaunch, end, worker, () -> {
                Command status = run("status", env, launcher, "run", "status", runId, "--json");
                JsonNode s = json(status);
                if (!s.path("status").asText().equals("settled")) {
                    throw new IllegalStateException("run " + runId + " is not settled: " + status.output());
                }
            });
        });
    }

    /**
     * A later evaluation as one command in the same home: {@code vigilo eval --profile-file P --dataset FILE
     * --concurrency C --json}; its start is launch to first request (upload and create included), its end last
     * answer to exit (settlement and the status print).
     */
    private Evaluation evaluateInOne(String label, String launcher, Path home, Path dataset, String kind)
            throws Exception {
        return measure(label, kind, home, (profile, env, t0) -> {
            Command eval = run(
                    "eval",
                    env,
                    launcher,
                    "eval",
                    "--profile-file",
                    profile.toString(),
                    "--dataset",
                    dataset.toString(),
                    "--name",
                    "endtoend",
                    "--concurrency",
                    Integer.toString(concurrency),
                    "--json");
            long end = System.nanoTime();
            return new Phase(List.of(eval), t0, end, eval, () -> {
                if (!json(eval).path("status").asText().equals("settled")) {
                    throw new IllegalStateException("eval did not settle its run: " + eval.output());
                }
            });
        });
    }

    /**
     * The measurement both paths share: an agent answering after the benchmark's latency (first and last request
     * noted), the profile written in {@code home}, the commands run, then (before the server's idle grace ends: the
     * host and PostgreSQL stop soon after the last client) the host's and PostgreSQL's CPU and the load; every case
     * answered and the run settled, or the benchmark fails. Prints the evaluation's line.
     */
    private Evaluation measure(String label, String kind, Path home, Commands commands) throws Exception {
        AtomicLong first = new AtomicLong(Long.MAX_VALUE);
        AtomicLong last = new AtomicLong(Long.MIN_VALUE);
        try (OpenAiTestServer llm = OpenAiTestServer.start()) {
            Duration latency = Duration.ofMillis(latencyMillis);
            llm.answerWith(request -> {
                long now = System.nanoTime();
                first.accumulateAndGet(now, Math::min);
                last.accumulateAndGet(now, Math::max);
                Matcher m = QUESTION.matcher(request.lastUserMessage());
                return Reply.content(m.find() ? Long.toString(Long.parseLong(m.group(1)) * 2) : "unknown")
                        .withLatency(latency);
            });
            Path profile = Files.writeString(home.resolve("profile.yaml"), PROFILE.formatted(llm.chatUrl()));
            Map<String, String> env = Map.of("VIGILO_HOME", home.toString());
            // A server already running (eval-up) has CPU of its own from before: not this evaluation's.
            double hostCpuBefore = hostCpuSeconds(home);
            double pgCpuBefore =
                    new PostgresCpu(home.resolve("postgres/data")).millis().orElse(0L) / 1000.0;
            long t0 = System.nanoTime();
            Phase p = commands.run(profile, env, t0);
            double hostCpu = hostCpuSeconds(home) - hostCpuBefore;
            double pgCpu =
                    new PostgresCpu(home.resolve("postgres/data")).millis().orElse(0L) / 1000.0 - pgCpuBefore;
            String load = loadAverage();
            if (llm.requestCount() < cases) {
                throw new IllegalStateException("the agent answered " + llm.requestCount() + " of " + cases + " cases; "
                        + p.executing().name() + " said: " + p.executing().output());
            }
            p.settled().check();
            long lastAnswer = last.get() + latency.toNanos();
            Evaluation e = new Evaluation(
                    label,
                    kind,
                    p.commands(),
                    (p.end() - t0) / 1e9,
                    (lastAnswer - first.get()) / 1e9,
                    (first.get() - p.launched()) / 1e9,
                    (p.end() - lastAnswer) / 1e9,
                    hostCpu,
                    pgCpu,
                    load);
            print(e);
            return e;
        }
    }

    private static void print(Evaluation e) {
        StringBuilder line = new StringBuilder(String.format("%s %-7s", e.launcher(), e.home()));
        for (Command c : e.commands()) {
            line.append(String.format("  %s %.2f s (cpu %.2f)", c.name(), c.wallSeconds(), c.cpuSeconds()));
        }
        line.append(String.format(
                "  [worker: start %.2f, exec %.2f, end %.2f]  host cpu %.2f, postgres cpu %.2f  end to end %.2f s ="
                        + " %.2fx execution  load %s",
                e.workerStartSeconds(),
                e.executionSeconds(),
                e.workerEndSeconds(),
                e.hostCpuSeconds(),
                e.postgresCpuSeconds(),
                e.endToEndSeconds(),
                e.ratio(),
                e.load()));
        System.out.println(line);
    }

    private static void printSummary(List<Evaluation> all, int cases) {
        Map<String, List<Evaluation>> groups = new LinkedHashMap<>();
        for (Evaluation e : all) {
            groups.computeIfAbsent(e.launcher() + " " + e.home(), k -> new ArrayList<>())
                    .add(e);
        }
        System.out.printf(
                "%nEND TO END %,d cases: medians of each launcher and home (per command wall s / cpu s)%n", cases);
        System.out.printf(
                "%-11s %13s %13s %13s %8s %8s %8s %10s %9s %9s %7s  %s%n",
                "",
                "upload|eval",
                "create",
                "worker",
                "w.start",
                "exec",
                "w.end",
                "host+pg",
                "cmd cpu",
                "e2e",
                "ratio",
                "loads");
        for (var g : groups.entrySet()) {
            List<Evaluation> es = g.getValue();
            StringBuilder line = new StringBuilder(String.format("%-11s", g.getKey()));
            for (int i = 0; i < 3; i++) {
                int k = i;
                if (es.get(0).commands().size() <= k) {
                    // `eval`: one command, its figures in the first column (upload, create and execute)
                    line.append(String.format(" %13s", "-"));
                    continue;
                }
                line.append(String.format(
                        " %6.2f/%-6.2f",
                        median(es, e -> e.commands().get(k).wallSeconds()),
                        median(es, e -> e.commands().get(k).cpuSeconds())));
            }
            line.append(String.format(
                    " %8.2f %8.2f %8.2f %10.2f %9.2f %9.2f %6.2fx  %s",
                    median(es, Evaluation::workerStartSeconds),
                    median(es, Evaluation::executionSeconds),
                    median(es, Evaluation::workerEndSeconds),
                    median(es, e -> e.hostCpuSeconds() + e.postgresCpuSeconds()),
                    median(es, Evaluation::commandCpuSeconds),
                    median(es, Evaluation::endToEndSeconds),
                    median(es, Evaluation::ratio),
                    es.stream().map(Evaluation::load).toList()));
            System.out.println(line);
        }
    }

    private static double median(List<Evaluation> es, java.util.function.ToDoubleFunction<Evaluation> f) {
        double[] v = es.stream().mapToDouble(f).sorted().toArray();
        return v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
    }

    /** Runs one command to its end; its CPU is what this JVM's reaped-children times grew by meanwhile. */
    private Command run(String name, Map<String, String> env, String launcher, String... args) throws Exception {
        List<String> cmd = new ArrayList<>();
        cmd.add(launcher);
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        pb.environment().putAll(env);
        long cpu0 = childrenCpuTicks();
        long t0 = System.nanoTime();
        Process p = pb.start();
        CompletableFuture<String> out = CompletableFuture.supplyAsync(() -> {
            try {
                return new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
        if (!p.waitFor(10, TimeUnit.MINUTES)) {
            p.destroyForcibly();
            throw new IllegalStateException(name + " did not finish in 10 minutes");
        }
        double wall = (System.nanoTime() - t0) / 1e9;
        String output = out.get(1, TimeUnit.MINUTES);
        if (p.exitValue() != 0) {
            throw new IllegalStateException(name + " exited " + p.exitValue() + ": " + output);
        }
        return new Command(name, wall, (childrenCpuTicks() - cpu0) / (double) TICKS_PER_SECOND, output);
    }

    /** The last line of a command's output that is a JSON object (logs may come first on the merged stream). */
    private static JsonNode json(Command c) throws IOException {
        List<String> lines = c.output().lines().toList();
        for (int i = lines.size() - 1; i >= 0; i--) {
            if (lines.get(i).startsWith("{")) {
                return MAPPER.readTree(lines.get(i));
            }
        }
        // a pretty-printed object spans lines: from its first line to the end
        int start = c.output().indexOf("\n{");
        if (c.output().startsWith("{")) {
            start = -1;
        }
        if (start >= -1 && c.output().contains("{")) {
            return MAPPER.readTree(c.output().substring(start + 1));
        }
        throw new IllegalStateException(c.name() + " printed no JSON: " + c.output());
    }

    /** This JVM's reaped children's CPU ({@code cutime + cstime} of {@code /proc/self/stat}), in clock ticks. */
    private static long childrenCpuTicks() throws IOException {
        String stat = Files.readString(Path.of("/proc/self/stat"));
        String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        return Long.parseLong(f[13]) + Long.parseLong(f[14]);
    }

    /**
     * The embedded server's host JVM's CPU so far ({@code hostPid} in its {@code server.properties}), or 0 when
     * gone.
     */
    private static double hostCpuSeconds(Path home) {
        try {
            Properties p = new Properties();
            try (var in = Files.newInputStream(home.resolve("postgres/server.properties"))) {
                p.load(in);
            }
            String stat =
                    Files.readString(Path.of("/proc", p.getProperty("hostPid").trim(), "stat"));
            String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            // its own time and its reaped children's (initdb, pg_ctl); the postmaster detaches and is counted apart
            return (Long.parseLong(f[11]) + Long.parseLong(f[12]) + Long.parseLong(f[13]) + Long.parseLong(f[14]))
                    / (double) TICKS_PER_SECOND;
        } catch (IOException | RuntimeException e) {
            return 0;
        }
    }

    /** Waits (at most two minutes) until the embedded server stopped after its idle grace. */
    private void awaitServerStopped(Path home) throws InterruptedException {
        Path state = home.resolve("postgres/server.properties");
        Path pid = home.resolve("postgres/data/postmaster.pid");
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
        while ((Files.exists(state) || Files.exists(pid)) && System.nanoTime() < deadline) {
            Thread.sleep(100);
        }
        if (Files.exists(state) || Files.exists(pid)) {
            throw new IllegalStateException("the embedded server under " + home + " did not stop in two minutes");
        }
    }

    private static String loadAverage() {
        try {
            return Files.readString(Path.of("/proc/loadavg")).split(" ")[0];
        } catch (IOException | RuntimeException e) {
            return "?";
        }
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
