package dev.vigilo.bench;

import dev.vigilo.checkpoint.CheckpointLog;
import dev.vigilo.checkpoint.LogLocation;
import dev.vigilo.checkpoint.LogRoot;
import dev.vigilo.datagen.DatagenProgress;
import dev.vigilo.datagen.ExperimentStatus;
import dev.vigilo.datagen.PipelineParser;
import dev.vigilo.datagen.PipelineRunner;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/**
 * {@code vigilo datagen} over the checkpoint log with group commit on and off, in the same run.
 *
 * <p>Workload: a pipeline of two {@code template} steps (no process, no network: the checkpoint log is all the work)
 * over {@code ITEMS} seeds (default 10,000), with 1, 4 and 16 workers (or the counts given). Each configuration runs in a fresh JVM on a new
 * experiment of a local durable root, timed from the moment the child has loaded Lance to the end of its run (seeds,
 * both steps, flushes, merges, the end-of-run maintenance). On and off alternate for each worker count; each pair is
 * run {@code ROUNDS} times (default 1) and the medians are printed with the ratio on / off, and the durable puts per
 * item each did (the WAL entries the run left in the log).
 *
 * <p>Run: {@code bench/run groupcommit [ITEMS] [ROUNDS] [WORKERS]} (WORKERS: comma-separated worker counts, default
 * {@code 1,4,16}).
 */
public final class GroupCommitBenchmark {
    private static final String PIPELINE = """
            name: bench
            input: seeds.jsonl
            id_field: id
            steps:
              - name: question
                kind: template
                template: "Explain {{topic}} at level {{level}}."
                output_field: question
              - name: answer
                kind: template
                template: "An answer to: {{question}}"
                output_field: answer
            """;

    private GroupCommitBenchmark() {}

    public static void main(String[] args) throws Exception {
        if (args.length > 0 && args[0].equals("child")) {
            child(args);
            return;
        }
        int items = args.length > 0 ? Integer.parseInt(args[0]) : 10_000;
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 1;
        int[] workerCounts = args.length > 2
                ? java.util.Arrays.stream(args[2].split(","))
                        .mapToInt(Integer::parseInt)
                        .toArray()
                : new int[] {1, 4, 16};
        Path work = Files.createTempDirectory("vigilo-groupcommit-bench");
        try {
            Path yaml = work.resolve("pipeline.yaml");
            Files.writeString(yaml, PIPELINE);
            try (var w = Files.newBufferedWriter(work.resolve("seeds.jsonl"))) {
                for (int i = 0; i < items; i++) {
                    w.write("{\"id\":\"s" + i + "\",\"topic\":\"topic " + i + "\",\"level\":" + (i % 5) + "}\n");
                }
            }
            System.out.printf(
                    "group commit: %,d items x 2 template steps, local durable root, %d round(s)%n", items, rounds);
            System.out.printf(
                    "%-8s %14s %14s %10s %16s %16s%n",
                    "workers", "on (items/s)", "off (items/s)", "on / off", "on puts/item", "off puts/item");
            int run = 0;
            for (int workers : workerCounts) {
                List<Double> on = new ArrayList<>();
                List<Double> off = new ArrayList<>();
                long onPuts = 0;
                long offPuts = 0;
                for (int r = 0; r < rounds; r++) {
                    String a = "on-" + workers + "-" + run++;
                    on.add(items / runChild(work, yaml, a, workers, true));
                    onPuts += WalEntries.count(work.resolve("root"), a);
                    String b = "off-" + workers + "-" + run++;
                    off.add(items / runChild(work, yaml, b, workers, false));
                    offPuts += WalEntries.count(work.resolve("root"), b);
                }
                double a = median(on);
                double b = median(off);
                System.out.printf(
                        "%-8d %14.1f %14.1f %9.1fx %16.3f %16.3f%n",
                        workers, a, b, a / b, (double) onPuts / rounds / items, (double) offPuts / rounds / items);
            }
        } finally {
            delete(work);
        }
    }

    private static double median(List<Double> xs) {
        List<Double> s = new ArrayList<>(xs);
        s.sort(null);
        int n = s.size();
        return n % 2 == 1 ? s.get(n / 2) : (s.get(n / 2 - 1) + s.get(n / 2)) / 2;
    }

    /** Runs one configuration in a fresh JVM; returns its seconds from READY to DONE. */
    private static double runChild(Path work, Path yaml, String experiment, int workers, boolean groupCommit)
            throws IOException, InterruptedException {
        Path err = work.resolve(experiment + ".err");
        Process p = new ProcessBuilder(
                        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                        "--add-opens=java.base/java.nio=ALL-UNNAMED",
                        "-cp",
                        System.getProperty("java.class.path"),
                        GroupCommitBenchmark.class.getName(),
                        "child",
                        yaml.toString(),
                        work.resolve("root").toString(),
                        experiment,
                        Integer.toString(workers),
                        Boolean.toString(groupCommit))
                .redirectError(err.toFile())
                .start();
        try (BufferedReader out =
                        new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
                OutputStream in = p.getOutputStream()) {
            expect(out, "READY", err);
            long t0 = System.nanoTime();
            in.write("GO\n".getBytes(StandardCharsets.UTF_8));
            in.flush();
            expect(out, "DONE", err);
            double seconds = (System.nanoTime() - t0) / 1e9;
            if (p.waitFor() != 0) {
                throw new IllegalStateException("child " + experiment + " exited " + p.exitValue());
            }
            return seconds;
        }
    }

    private static void expect(BufferedReader out, String word, Path err) throws IOException {
        String line = out.readLine();
        if (line == null || !line.startsWith(word)) {
            throw new IllegalStateException(
                    "the child said " + line + " instead of " + word + ": " + Files.readString(err));
        }
    }

    /** Child: loads Lance, says READY, waits for GO, runs, says DONE (args: child yaml root exp workers group). */
    private static void child(String[] args) throws IOException {
        LogRoot root = LogRoot.local(Path.of(args[2]));
        try (CheckpointLog log = CheckpointLog.openOrCreate(new LogLocation(root, "bench", args[3]))) {
            System.out.println("READY");
            System.out.flush();
        }
        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)).readLine();
        ExperimentStatus status = PipelineRunner.run(
                PipelineParser.parse(Path.of(args[1])),
                new PipelineRunner.Options(root, args[3], Integer.parseInt(args[4]), DatagenProgress.NONE)
                        .withGroupCommit(Boolean.parseBoolean(args[5])));
        if (status.completed() != status.items()) {
            throw new IllegalStateException("only " + status.completed() + " of " + status.items() + " completed");
        }
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
