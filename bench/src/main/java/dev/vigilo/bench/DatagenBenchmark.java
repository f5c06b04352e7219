package dev.vigilo.bench;

import dev.vigilo.agent.OpenAiTestServer;
import dev.vigilo.agent.OpenAiTestServer.Reply;
import dev.vigilo.checkpoint.CheckpointLog;
import dev.vigilo.checkpoint.LogLocation;
import dev.vigilo.checkpoint.LogRoot;
import dev.vigilo.datagen.DatagenProgress;
import dev.vigilo.datagen.ExperimentStatus;
import dev.vigilo.datagen.Experiments;
import dev.vigilo.datagen.PipelineParser;
import dev.vigilo.datagen.PipelineRunner;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * {@code vigilo datagen} throughput with a chat step against a local OpenAI-compatible server, beside the server's
 * capacity and a raw HTTP baseline measured in the same run.
 *
 * <p>Workload: {@code ITEMS} seeds (default 10,000) through one chat step; the server (the agent module's test
 * server) answers every request after {@code LATENCY_MS} (default 50 ms); {@code --workers 64} per process, so the
 * server's capacity for one process is 64 / latency (1,280 requests/s at 50 ms). Measured: (1) raw: the same number
 * of requests sent by 64 threads through a JDK HttpClient, nothing written; (2) Vigilo with 1 process and (3) with 3
 * processes on one experiment (each a fresh JVM running {@code datagen run} on a local durable root, timed from
 * the moment all of them have loaded Lance to the last one's end, so the whole run is measured: joining, folding,
 * seeds, the chat step, flushes, merges and the end-of-run maintenance), each with a new experiment. Reported: items/s,
 * items/s as a share of the server's capacity, and the checkpoint log's cost per item: (wall time - raw wall time)
 * / items, and the durable puts per item (the WAL entries the run left in the log).
 *
 * <p>Run: {@code bench/run datagen [ITEMS] [LATENCY_MS]}.
 */
public final class DatagenBenchmark {
    private static final int WORKERS = 64;

    private DatagenBenchmark() {}

    public static void main(String[] args) throws Exception {
        if (args.length > 0 && args[0].equals("worker")) {
            worker(args);
            return;
        }
        int items = args.length > 0 ? Integer.parseInt(args[0]) : 10_000;
        int latencyMs = args.length > 1 ? Integer.parseInt(args[1]) : 50;
        Path work = Files.createTempDirectory("vigilo-bench-datagen-");
        try (OpenAiTestServer server = OpenAiTestServer.start()) {
            Duration latency = Duration.ofMillis(latencyMs);
            server.answerWith(r -> Reply.content("answer: " + r.lastUserMessage())
                    .withUsage(12, 4)
                    .withLatency(latency));
            StringBuilder seeds = new StringBuilder();
            for (int i = 0; i < items; i++) {
                seeds.append("{\"id\":\"s")
                        .append(i)
                        .append("\",\"n\":")
                        .append(i)
                        .append("}\n");
            }
            Files.writeString(work.resolve("seeds.jsonl"), seeds);
            Path yaml = work.resolve("bench.yaml");
            Files.writeString(yaml, """
                    name: bench
                    input: seeds.jsonl
                    id_field: id
                    steps:
                      - name: ask
                        kind: chat
                        url: %s
                        model: bench
                        messages: [{role: user, content: "what is {{n}} plus one?"}]
                        usage_field: false
                        finish_reason_field: false
                    """.formatted(server.chatUrl()));
            double capacity = WORKERS / (latencyMs / 1000.0);
            System.out.printf(
                    "workload: %,d items, one chat step, server latency %d ms, --workers %d per process"
                            + " (server capacity %,.0f requests/s per process)%n",
                    items, latencyMs, WORKERS, capacity);
            double raw = raw(server.chatUrl(), items);
            System.out.printf(
                    "raw HTTP (no log): %.2f s, %,.0f requests/s (%.0f%% of capacity)%n",
                    raw, items / raw, 100 * items / raw / capacity);
            Path root = work.resolve("root");
            for (int processes : new int[] {1, 3}) {
                String exp = "p" + processes;
                double secs = vigilo(work, yaml, root, exp, processes);
                ExperimentStatus s = Experiments.status(LogRoot.local(root), "bench", exp);
                if (s.completed() != items) {
                    throw new IllegalStateException("not all items completed: " + s.toJson());
                }
                long batches = items + (items + 255) / 256; // one step batch per item, seeds 256 per batch
                long puts = WalEntries.count(root, exp);
                System.out.printf(
                        "vigilo, %d process%s: %.2f s, %,.0f items/s (%.0f%% of one process's server capacity);"
                                + " log cost %.2f ms/item over raw, %.2f durable puts/item (%.1f checkpoint batches"
                                + " per put)%n",
                        processes,
                        processes == 1 ? "" : "es",
                        secs,
                        items / secs,
                        100 * items / secs / capacity,
                        (secs - raw) * 1000 / items,
                        (double) puts / items,
                        (double) batches / puts);
            }
        } finally {
            // -Dbench.keep=true keeps the logs and the processes' stderr for a look afterwards.
            if (Boolean.getBoolean("bench.keep")) {
                System.out.println("kept " + work);
            } else {
                delete(work);
            }
        }
    }

    /** {@code items} requests from 64 threads through one JDK HttpClient: the server's and client's own speed. */
    private static double raw(URI url, int items) throws Exception {
        HttpClient http =
                HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
        ExecutorService pool = Executors.newFixedThreadPool(WORKERS);
        try {
            long t0 = System.nanoTime();
            List<Future<Integer>> done = new ArrayList<>();
            for (int i = 0; i < items; i++) {
                String body = "{\"model\":\"bench\",\"messages\":[{\"role\":\"user\",\"content\":\"what is " + i
                        + " plus one?\"}]}";
                done.add(pool.submit(() -> http.send(
                                HttpRequest.newBuilder(url)
                                        .header("Content-Type", "application/json")
                                        .POST(HttpRequest.BodyPublishers.ofString(body))
                                        .build(),
                                HttpResponse.BodyHandlers.ofByteArray())
                        .statusCode()));
            }
            for (Future<Integer> f : done) {
                if (f.get() != 200) {
                    throw new IllegalStateException("raw request failed: " + f.get());
                }
            }
            return (System.nanoTime() - t0) / 1e9;
        } finally {
            pool.shutdownNow();
        }
    }

    /**
     * {@code processes} child JVMs running the pipeline as experiment {@code exp}: each loads Lance and reports READY;
     * once all are ready they are told to go, and the time from then to the last one's exit is returned (JVM and
     * native-library start-up are left out: on a loaded 2-core machine they take seconds).
     */
    private static double vigilo(Path work, Path yaml, Path root, String exp, int processes) throws Exception {
        Path tmp = Files.createDirectories(work.resolve("jvm-tmp"));
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<Process> procs = new ArrayList<>();
        List<BufferedReader> outs = new ArrayList<>();
        for (int p = 0; p < processes; p++) {
            Process proc = new ProcessBuilder(List.of(
                            java,
                            "--add-opens=java.base/java.nio=ALL-UNNAMED",
                            "-Djava.io.tmpdir=" + tmp,
                            "-cp",
                            System.getProperty("java.class.path"),
                            DatagenBenchmark.class.getName(),
                            "worker",
                            yaml.toString(),
                            root.toString(),
                            exp,
                            Integer.toString(WORKERS)))
                    .redirectError(work.resolve(exp + "-" + p + ".err").toFile())
                    .start();
            procs.add(proc);
            outs.add(new BufferedReader(new InputStreamReader(proc.getInputStream(), StandardCharsets.UTF_8)));
        }
        for (int p = 0; p < processes; p++) {
            expect(outs.get(p), "READY", work, exp, p);
        }
        long t0 = System.nanoTime();
        for (Process proc : procs) {
            proc.getOutputStream().write("GO\n".getBytes(StandardCharsets.UTF_8));
            proc.getOutputStream().flush();
        }
        for (int p = 0; p < processes; p++) {
            expect(outs.get(p), "DONE", work, exp, p);
            if (!procs.get(p).waitFor(5, TimeUnit.MINUTES) || procs.get(p).exitValue() != 0) {
                throw new IllegalStateException("process " + p + " failed");
            }
        }
        return (System.nanoTime() - t0) / 1e9;
    }

    private static void expect(BufferedReader out, String word, Path work, String exp, int p) throws IOException {
        String line = out.readLine();
        if (line == null || !line.startsWith(word)) {
            throw new IllegalStateException("process " + p + " said " + line + " instead of " + word + ": "
                    + Files.readString(work.resolve(exp + "-" + p + ".err")));
        }
    }

    /** Child: loads Lance, says READY, waits for GO, runs the pipeline, says DONE (args: worker yaml root exp workers). */
    private static void worker(String[] args) throws IOException {
        LogRoot root = LogRoot.local(Path.of(args[2]));
        // Opening (and creating) the log loads Lance's native library, which is not what is measured.
        try (CheckpointLog log = CheckpointLog.openOrCreate(new LogLocation(root, "bench", args[3]))) {
            System.out.println("READY");
            System.out.flush();
        }
        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)).readLine();
        PipelineRunner.run(
                PipelineParser.parse(Path.of(args[1])),
                new PipelineRunner.Options(root, args[3], Integer.parseInt(args[4]), DatagenProgress.NONE));
        System.out.println("DONE");
        System.out.flush();
    }

    private static void delete(Path dir) throws IOException {
        try (Stream<Path> s = Files.walk(dir)) {
            for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }
}
