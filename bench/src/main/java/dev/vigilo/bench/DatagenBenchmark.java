package dev.vigilo.bench;

import dev.vigilo.agent.OpenAiTestServer;
import dev.vigilo.agent.OpenAiTestServer.Reply;
import dev.vigilo.checkpoint.CheckpointLog;
import dev.vigilo.checkpoint.LogLocation;
import dev.vigilo.checkpoint.LogRoot;
import dev.vigilo.control.ControlDatabase;
import dev.vigilo.control.ControlSettings;
import dev.vigilo.datagen.DatagenProgress;
import dev.vigilo.datagen.DatasetExport;
import dev.vigilo.datagen.ExperimentStatus;
import dev.vigilo.datagen.Experiments;
import dev.vigilo.datagen.PipelineParser;
import dev.vigilo.datagen.PipelineRunner;
import dev.vigilo.dataset.CaseMap;
import dev.vigilo.dataset.DatasetCatalog;
import dev.vigilo.dataset.DatasetEntry;
import dev.vigilo.dataset.UploadProgress;
import dev.vigilo.dataset.UploadRequest;
import dev.vigilo.storage.ObjectStore;
import dev.vigilo.storage.ObjectStores;
import dev.vigilo.storage.S3ProxyFixture;
import dev.vigilo.storage.StorageConfig;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.math.BigDecimal;
import java.math.RoundingMode;
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
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * The figures of issue 30 for {@code vigilo datagen}, each beside a raw baseline measured in the same run.
 *
 * <p><b>Chat phase.</b> {@code ITEMS} seeds (default 10,000) through one chat step priced like a small model (150 per
 * million prompt tokens, 600 per million completion tokens) against the agent module's OpenAI-compatible test server,
 * which answers every request after {@code LATENCY_MS} (default 50 ms) with a usage of 12 prompt and 4 completion
 * tokens; {@code --workers 64} per process, so one process can have the server answer at most 64 / latency requests
 * per second (1,280/s at 50 ms). For each durable root, local (a directory) and S3 (s3proxy in this JVM, objects on
 * disk, reached through a {@code storage.toml} and the AWS default credential chain as a user's process would):
 * (1) the raw HTTP ceiling: the same number of requests sent by 64 threads through a JDK HttpClient, nothing written;
 * (2) Vigilo with 1 process and (3) with 3 processes on one experiment (each a fresh JVM running {@code datagen run},
 * timed from the moment all of them have loaded Lance to the last one's end: joining, folding, seeds, the chat step,
 * flushes, merges and the end-of-run maintenance), each a new experiment. Reported: items/s and its ratio to the raw
 * requests/s; the cost per 1,000 items as {@code datagen status} sums it (the pipeline's prices over the checkpointed
 * usage) and as the server billed it (the usage of every answer it gave, at the same prices), beside the raw
 * requests' cost per 1,000, so that a call made twice would show; on a local root also the log's cost per item over
 * raw and the durable puts per item.
 *
 * <p><b>Export phase.</b> {@code EXPORT_ITEMS} items (default 100,000) completed by a template-only pipeline (not
 * timed), then, alternating over {@value #EXPORT_ROUNDS} rounds after a warm-up (medians reported): {@code datagen
 * export --to-dataset --map id=item_id,input=question,expected=answer} ({@link DatasetExport#toDataset}: the log
 * folded, the records written, uploaded with the map) against {@code dataset upload} of a JSONL file holding the same
 * cases ({@code id}, {@code input}, {@code expected}); each into a new local store of one embedded control database.
 * Reported: seconds, items/s and the ratio, and whether both stored the same membership.
 *
 * <p>Run: {@code bench/run datagen [ITEMS [LATENCY_MS [EXPORT_ITEMS]]]}; {@code -Dbench.stores=local} (or {@code s3})
 * runs the chat phase on one root only, {@code -Dbench.phases=chat} (or {@code export}) one phase only.
 */
public final class DatagenBenchmark {
    private static final int WORKERS = 64;
    private static final int EXPORT_ROUNDS = 3;
    private static final BigDecimal PROMPT_PER_MILLION = new BigDecimal("150");
    private static final BigDecimal COMPLETION_PER_MILLION = new BigDecimal("600");
    private static final int PROMPT_TOKENS = 12;
    private static final int COMPLETION_TOKENS = 4;

    private DatagenBenchmark() {}

    public static void main(String[] args) throws Exception {
        if (args.length > 0 && args[0].equals("worker")) {
            worker(args);
            return;
        }
        int items = args.length > 0 ? Integer.parseInt(args[0]) : 10_000;
        int latencyMs = args.length > 1 ? Integer.parseInt(args[1]) : 50;
        int exportItems = args.length > 2 ? Integer.parseInt(args[2]) : 100_000;
        String phases = System.getProperty("bench.phases", "chat,export");
        List<String> kinds =
                List.of(System.getProperty("bench.stores", "local,s3").split(","));
        Path work = Files.createTempDirectory("vigilo-bench-datagen-");
        try {
            if (phases.contains("chat")) {
                chatPhase(work, items, latencyMs, kinds);
            }
            if (phases.contains("export")) {
                exportPhase(work.resolve("export"), exportItems);
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

    private static void chatPhase(Path work, int items, int latencyMs, List<String> kinds) throws Exception {
        Files.createDirectories(work);
        try (OpenAiTestServer server = OpenAiTestServer.start()) {
            Duration latency = Duration.ofMillis(latencyMs);
            server.answerWith(r -> Reply.content("answer: " + r.lastUserMessage())
                    .withUsage(PROMPT_TOKENS, COMPLETION_TOKENS)
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
                    prices:
                      bench: {prompt_per_million: %s, completion_per_million: %s}
                    steps:
                      - name: ask
                        kind: chat
                        url: %s
                        model: bench
                        messages: [{role: user, content: "what is {{n}} plus one?"}]
                        usage_field: false
                        finish_reason_field: false
                    """.formatted(PROMPT_PER_MILLION, COMPLETION_PER_MILLION, server.chatUrl()));
            double capacity = WORKERS / (latencyMs / 1000.0);
            System.out.printf(
                    "chat phase: %,d items, one chat step (%d prompt + %d completion tokens a call at %s / %s per"
                            + " million), server latency %d ms, --workers %d per process (server capacity %,.0f"
                            + " requests/s per process)%n",
                    items,
                    PROMPT_TOKENS,
                    COMPLETION_TOKENS,
                    PROMPT_PER_MILLION,
                    COMPLETION_PER_MILLION,
                    latencyMs,
                    WORKERS,
                    capacity);
            for (String kind : kinds) {
                Path kindWork = Files.createDirectories(work.resolve(kind));
                try (BenchStores stores = BenchStores.of(kind, kindWork)) {
                    System.out.printf("%n%s durable root: %s%n", kind, stores.describe());
                    Billed before = Billed.of(server);
                    double raw = raw(server.chatUrl(), items);
                    double rawRate = items / raw;
                    BigDecimal rawCost = Billed.of(server).minus(before).perThousand(items);
                    System.out.printf(
                            "  raw HTTP (no log): %.2f s, %,.0f requests/s (%.0f%% of capacity), billed %s per 1,000"
                                    + " requests%n",
                            raw, rawRate, 100 * rawRate / capacity, plain(rawCost));
                    Path storageToml = null;
                    String rootText;
                    LogRoot root;
                    if (stores.isS3()) {
                        stores.config("datagen"); // writes storage-datagen.toml: one S3 store named s3, prefix datagen
                        storageToml = kindWork.resolve("storage-datagen.toml");
                        rootText = "store:s3";
                        Path toml = storageToml;
                        root = LogRoot.resolve(rootText, () -> StorageConfig.load(toml));
                    } else {
                        root = LogRoot.local(kindWork.resolve("root"));
                        rootText = kindWork.resolve("root").toString();
                    }
                    for (int processes : new int[] {1, 3}) {
                        String exp = "p" + processes;
                        Billed b0 = Billed.of(server);
                        double secs = vigilo(kindWork, yaml, rootText, storageToml, exp, processes);
                        BigDecimal billed = Billed.of(server).minus(b0).perThousand(items);
                        ExperimentStatus s = Experiments.status(root, "bench", exp);
                        if (s.completed() != items) {
                            throw new IllegalStateException("not all items completed: " + s.toJson());
                        }
                        BigDecimal recorded = s.usage().cost() == null
                                ? BigDecimal.ZERO
                                : s.usage()
                                        .cost()
                                        .multiply(BigDecimal.valueOf(1000))
                                        .divide(BigDecimal.valueOf(items), 9, RoundingMode.HALF_UP);
                        double rate = items / secs;
                        String logCost = "";
                        if (!stores.isS3()) {
                            long batches = items + (items + 255) / 256; // one step batch per item, seeds 256 a batch
                            long puts = WalEntries.count(kindWork.resolve("root"), exp);
                            logCost = String.format(
                                    "; log cost %.2f ms/item over raw, %.2f durable puts/item (%.1f checkpoint"
                                            + " batches per put)",
                                    (secs - raw) * 1000 / items, (double) puts / items, (double) batches / puts);
                        }
                        System.out.printf(
                                "  vigilo, %d process%s: %.2f s, %,.0f items/s = %.2f x raw (%.0f%% of one"
                                        + " process's server capacity); cost per 1,000 items %s recorded, %s billed"
                                        + " = %.2f x raw's%s%n",
                                processes,
                                processes == 1 ? "" : "es",
                                secs,
                                rate,
                                rate / rawRate,
                                100 * rate / capacity,
                                plain(recorded),
                                plain(billed),
                                rawCost.signum() == 0
                                        ? Double.NaN
                                        : billed.divide(rawCost, 6, RoundingMode.HALF_UP)
                                                .doubleValue(),
                                logCost);
                    }
                }
            }
        }
    }

    /** What the server billed so far: the usage of every answer it gave. */
    private record Billed(long promptTokens, long completionTokens) {
        static Billed of(OpenAiTestServer server) {
            return new Billed(server.answeredPromptTokens(), server.answeredCompletionTokens());
        }

        Billed minus(Billed earlier) {
            return new Billed(promptTokens - earlier.promptTokens, completionTokens - earlier.completionTokens);
        }

        /** The cost of these tokens at the pipeline's prices, per 1,000 of {@code items}. */
        BigDecimal perThousand(long items) {
            BigDecimal cost = PROMPT_PER_MILLION
                    .multiply(BigDecimal.valueOf(promptTokens))
                    .add(COMPLETION_PER_MILLION.multiply(BigDecimal.valueOf(completionTokens)))
                    .divide(BigDecimal.valueOf(1_000_000));
            return cost.multiply(BigDecimal.valueOf(1000)).divide(BigDecimal.valueOf(items), 9, RoundingMode.HALF_UP);
        }
    }

    private static String plain(BigDecimal d) {
        return d.signum() == 0 ? "0" : d.stripTrailingZeros().toPlainString();
    }

    /**
     * {@code items} items completed by a template-only pipeline, then {@code datagen export --to-dataset} against
     * {@code dataset upload} of the same cases as JSONL, alternating, after a warm-up round.
     */
    private static void exportPhase(Path work, int items) throws Exception {
        Files.createDirectories(work);
        StringBuilder seeds = new StringBuilder();
        StringBuilder cases = new StringBuilder();
        for (int i = 0; i < items; i++) {
            String id = String.format("s%07d", i);
            String question = "what is " + i + " plus one?";
            String answer = Integer.toString(i + 1);
            seeds.append("{\"id\":\"%s\",\"question\":\"%s\",\"answer\":\"%s\"}\n".formatted(id, question, answer));
            cases.append("{\"id\":\"%s\",\"input\":\"%s\",\"expected\":\"%s\"}\n".formatted(id, question, answer));
        }
        Files.writeString(work.resolve("seeds.jsonl"), seeds);
        Path casesFile = work.resolve("cases.jsonl");
        Files.writeString(casesFile, cases);
        Path yaml = work.resolve("export.yaml");
        Files.writeString(yaml, """
                name: gen
                input: seeds.jsonl
                id_field: id
                steps:
                  - {name: pair, kind: template, template: "{{question}} {{answer}}", output_field: pair}
                """);
        LogRoot root = LogRoot.local(work.resolve("root"));
        System.out.printf(
                "%nexport phase: %,d items (%.1f MB of cases as JSONL); generating them with a template step (not"
                        + " timed)...%n",
                items, Files.size(casesFile) / 1e6);
        long g0 = System.nanoTime();
        ExperimentStatus gen = PipelineRunner.run(
                PipelineParser.parse(yaml), new PipelineRunner.Options(root, "e", 16, DatagenProgress.NONE));
        if (gen.completed() != items) {
            throw new IllegalStateException("not all items completed: " + gen.toJson());
        }
        System.out.printf("  generated in %.1f s%n", (System.nanoTime() - g0) / 1e9);
        CaseMap map = CaseMap.parse("id=item_id,input=question,expected=answer", "--map");
        try (ControlDatabase control = ControlDatabase.open(new ControlSettings.Embedded(work.resolve("postgres")))) {
            DatasetCatalog catalog = new DatasetCatalog(control.jdbi());
            List<Long> export = new ArrayList<>();
            List<Long> upload = new ArrayList<>();
            List<Long> fold = new ArrayList<>();
            boolean sameMembership = true;
            for (int round = 0; round <= EXPORT_ROUNDS; round++) {
                long t0 = System.nanoTime();
                DatasetEntry exported;
                try (ObjectStore store = ObjectStores.open(StorageConfig.localDefault(work.resolve("export-" + round))
                        .defaultStore())) {
                    exported = DatasetExport.toDataset(
                            root,
                            "gen",
                            "e",
                            "export-" + round,
                            map,
                            Optional.empty(),
                            catalog,
                            store,
                            UploadProgress.NONE);
                }
                long t1 = System.nanoTime();
                DatasetEntry uploaded;
                try (ObjectStore store = ObjectStores.open(StorageConfig.localDefault(work.resolve("upload-" + round))
                        .defaultStore())) {
                    uploaded = catalog.upload(UploadRequest.of(casesFile), store, UploadProgress.NONE);
                }
                long t2 = System.nanoTime();
                // Where the export's time goes: the same fold of the log, written as a file (datagen export --out).
                Path jsonl = work.resolve("items-" + round + ".jsonl");
                Experiments.export(root, "gen", "e", jsonl);
                long t3 = System.nanoTime();
                Files.delete(jsonl);
                if (exported.caseCount() != items || uploaded.caseCount() != items) {
                    throw new IllegalStateException("stored " + exported.caseCount() + " and " + uploaded.caseCount()
                            + " cases, expected " + items);
                }
                sameMembership &= exported.membershipUuid().equals(uploaded.membershipUuid());
                BenchStores.deleteTree(work.resolve("export-" + round));
                BenchStores.deleteTree(work.resolve("upload-" + round));
                if (round > 0) {
                    export.add(t1 - t0);
                    upload.add(t2 - t1);
                    fold.add(t3 - t2);
                }
                System.out.printf(
                        "  round %d%s: export --to-dataset %.2f s, dataset upload %.2f s, export --out (fold + JSONL)"
                                + " %.2f s%n",
                        round, round == 0 ? " (warm-up)" : "", (t1 - t0) / 1e9, (t2 - t1) / 1e9, (t3 - t2) / 1e9);
            }
            double e = median(export) / 1e9;
            double u = median(upload) / 1e9;
            double f = median(fold) / 1e9;
            System.out.printf(
                    "  datagen export --to-dataset: %.2f s, %,.0f items/s; dataset upload of the same JSONL: %.2f s,"
                            + " %,.0f cases/s; export / upload time = %.2f x (medians of %d rounds); same membership:"
                            + " %s; of the export, reading the log (datagen export --out: fold + JSONL) takes %.2f s%n",
                    e, items / e, u, items / u, e / u, EXPORT_ROUNDS, sameMembership ? "yes" : "NO", f);
        }
    }

    private static long median(List<Long> xs) {
        List<Long> sorted = new ArrayList<>(xs);
        sorted.sort(null);
        return sorted.get(sorted.size() / 2);
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
    private static double vigilo(Path work, Path yaml, String root, Path storageToml, String exp, int processes)
            throws Exception {
        Path tmp = Files.createDirectories(work.resolve("jvm-tmp"));
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<Process> procs = new ArrayList<>();
        List<BufferedReader> outs = new ArrayList<>();
        for (int p = 0; p < processes; p++) {
            List<String> command = new ArrayList<>(List.of(
                    java,
                    "--add-opens=java.base/java.nio=ALL-UNNAMED",
                    "-Djava.io.tmpdir=" + tmp,
                    "-cp",
                    System.getProperty("java.class.path"),
                    DatagenBenchmark.class.getName(),
                    "worker",
                    yaml.toString(),
                    root,
                    exp,
                    Integer.toString(WORKERS)));
            ProcessBuilder pb = new ProcessBuilder(command)
                    .redirectError(work.resolve(exp + "-" + p + ".err").toFile());
            if (storageToml != null) {
                // An S3 root: the store from storage.toml, credentials from the AWS default chain, as for a user.
                command.add(storageToml.toString());
                pb.command(command);
                S3ProxyFixture.standardChainOnly(pb.environment(), work);
            }
            Process proc = pb.start();
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

    /**
     * Child: loads Lance, says READY, waits for GO, runs the pipeline, says DONE (args: worker yaml root exp workers
     * [storage.toml]; the root as {@code datagen run --durable-root} takes it).
     */
    private static void worker(String[] args) throws IOException {
        LogRoot root = args.length > 5
                ? LogRoot.resolve(args[2], () -> StorageConfig.load(Path.of(args[5])))
                : LogRoot.local(Path.of(args[2]));
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
