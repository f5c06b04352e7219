package dev.vigilo.web;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigilo.exec.LargeRun;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A large run (20,000 cases in 200 chunks with real receipts by default; {@code -Dvigilo.web.largeRunCases=100000}
 * for the benchmark of docs/benchmarks.md, "Dashboard" and "Results explorer and matrix", whose table it prints last) served by the dashboard in its own JVM with {@code -Xmx256m}:
 * every page and API call answers with the right figures and the server's heap stays within its limit; with
 * 4 runs of the dataset in its matrix by default ({@code -Dvigilo.web.largeRunMatrixRuns=N}). Every page
 * reads a bounded amount whatever the run's size (keyset pages, per-chunk aggregates), so the smaller default checks
 * the same paths in a fraction of the time. Timings are printed, not asserted: wall-clock bounds flake on a loaded
 * machine.
 */
class LargeRunTest {
    static final int CASES = Integer.getInteger("vigilo.web.largeRunCases", 20_000);
    static final String HEAP = "256m";
    static final int WARM_REPEATS = 5;
    /** Runs in the matrix measured (the first and this many minus one more of the same dataset). */
    static final int MATRIX_RUNS = Integer.getInteger("vigilo.web.largeRunMatrixRuns", 4);

    @TempDir
    Path dir;

    /**
     * One timed request: the first answer and the median of the warm repeats; {@code doc} its row's label in
     * docs/benchmarks.md, "Results explorer and matrix" (null for the rows only this test prints).
     */
    record Timing(String what, String doc, int status, double firstMillis, double warmMillis, int bytes) {}

    @Test
    void everyPageOfALargeRunAnswersUnderASmallHeap() throws Exception {
        try (LargeRun run = LargeRun.build(dir, CASES)) {
            assertThat(run.status()).isEqualTo("settled");
            List<UUID> matrix = new ArrayList<>(List.of(run.runId()));
            while (matrix.size() < MATRIX_RUNS) {
                matrix.add(run.addRun());
            }
            Process server = new ProcessBuilder(
                            Path.of(System.getProperty("java.home"), "bin", "java")
                                    .toString(),
                            "-Xmx" + HEAP,
                            "--add-opens=java.base/java.nio=ALL-UNNAMED",
                            "-Dlogback.statusListenerClass=ch.qos.logback.core.status.NopStatusListener",
                            "-cp",
                            System.getProperty("java.class.path"),
                            ServeMain.class.getName(),
                            run.controlUrl(),
                            run.storeRoot().toString())
                    .redirectError(ProcessBuilder.Redirect.INHERIT)
                    .start();
            try {
                BufferedReader out =
                        new BufferedReader(new InputStreamReader(server.getInputStream(), StandardCharsets.UTF_8));
                String line = out.readLine();
                while (line != null && !line.startsWith("port ")) {
                    line = out.readLine();
                }
                assertThat(line).as("the server's port line").isNotNull();
                String base = "http://127.0.0.1:" + line.substring(5).trim();
                List<Timing> timings = measure(base, run.runId(), run.datasetId(), matrix);
                print(timings, matrix.size());
                assertThat(timings).allMatch(t -> t.status() == 200, "every answer is 200");
                String metrics = Http.get(base + "/metrics").body();
                double used = heap(metrics, "jvm_memory_used_bytes");
                double max = heap(metrics, "jvm_memory_max_bytes");
                System.out.printf(
                        Locale.ROOT, "server heap: %.0f MiB used of %.0f MiB%n", used / 1048576, max / 1048576);
                assertThat(max).isLessThanOrEqualTo(256.0 * 1024 * 1024);
            } finally {
                server.getOutputStream().close();
                if (!server.waitFor(30, TimeUnit.SECONDS)) {
                    server.destroyForcibly();
                }
            }
        }
    }

    private static List<Timing> measure(String base, UUID run, UUID dataset, List<UUID> matrixRuns) {
        long last = CASES - 1;
        int n = matrixRuns.size();
        String deep = String.format(Locale.ROOT, "page after ordinal %,d", CASES * 9 / 10);
        String r = "/runs/" + run;
        StringBuilder mx = new StringBuilder("/matrix?");
        matrixRuns.forEach(x -> mx.append("run=").append(x).append('&'));
        // {label, path, what the answer must hold, its row in docs/benchmarks.md or null}; the matrix first, so its
        // first answer builds every run's results explorer index.
        List<String[]> pages = List.of(
                new String[] {
                    "matrix of " + n + " runs, first page",
                    mx + "show=all",
                    "id=\"matrix\"",
                    "matrix of " + n + " runs, first page (builds " + n + " indexes)"
                },
                new String[] {
                    "matrix, page at 90%", mx + "show=all&after=" + (CASES * 9 / 10), "Next page", "matrix, " + deep
                },
                new String[] {
                    "matrix, different only",
                    mx + "show=different",
                    "id=\"matrix-runs\"",
                    "matrix, different only (scans every row: none differ)"
                },
                new String[] {"run list", "/runs", "settled", null},
                new String[] {"run list (API)", "/api/runs", "\"cases_done\":" + CASES, null},
                new String[] {"run page", r, "id=\"gates\"", null},
                new String[] {"run status (API)", "/api/runs/" + run, "\"cases_done\":" + CASES, null},
                new String[] {"throughput (API)", "/api/runs/" + run + "/throughput", "\"points\"", null},
                new String[] {"cases, first page", r + "/cases", "case-0<", "cases, first page (explorer)"},
                new String[] {
                    "cases, page at 90%", r + "/cases?after=" + (CASES * 9 / 10), "Next page", "cases, " + deep
                },
                new String[] {"failed cases", r + "/cases?outcome=failed", "verdict-failed", "failed cases"},
                new String[] {"errored cases", r + "/cases?outcome=errored", "verdict-errored", null},
                new String[] {"passed cases", r + "/cases?outcome=passed", "verdict-passed", null},
                new String[] {"cases (API, 500)", "/api" + r + "/cases?limit=500", "\"next_after\":499", null},
                // The results explorer (its index was built by the matrix above; warm figures read it).
                new String[] {
                    "explorer: search",
                    r + "/cases?q=CASE-" + (CASES - 7),
                    "case-" + (CASES - 7) + "<",
                    "explorer: search for one id"
                },
                new String[] {
                    "explorer: failed, by time",
                    r + "/cases?outcome=failed&sort=time&order=desc",
                    "verdict-failed",
                    "explorer: failed, by agent time, descending"
                },
                new String[] {
                    "explorer: one gate's failures",
                    r + "/cases?gate=all&outcome=failed",
                    "verdict-failed",
                    "explorer: one gate's failed cases (gate filter, with its counts)"
                },
                new String[] {
                    "explorer: by score, page at 90%",
                    r + "/cases?sort=score&after=" + (CASES * 9 / 10),
                    "Next page",
                    "explorer: by score, " + deep
                },
                new String[] {
                    "explorer: search + filter (API, 500)",
                    "/api" + r + "/cases?q=case-1&outcome=passed&sort=cost&order=desc&limit=500",
                    "\"total\":",
                    "explorer: search + outcome + sort by cost (API, 500 a page)"
                },
                new String[] {
                    "explorer: a case in a filtered list",
                    r + "/cases/" + CASES / 2 + "?sort=time",
                    "id=\"list-place\"",
                    "explorer: a case with its place in a sorted list"
                },
                new String[] {"first case", r + "/cases/0", "id=\"case-input\"", null},
                new String[] {"middle case", r + "/cases/" + CASES / 2, "case-" + CASES / 2, null},
                new String[] {"last case", r + "/cases/" + last, "case-" + last, null},
                new String[] {
                    "dataset, last page", "/datasets/" + dataset + "?from=" + (CASES - 50), "case-" + last, null
                },
                new String[] {"metrics", "/metrics", "vigilo_runs{status=\"settled\"} " + n + ".0", null});
        List<Timing> out = new ArrayList<>();
        for (String[] p : pages) {
            long t0 = System.nanoTime();
            HttpResponse<String> first = slowGet(base + p[1]);
            double firstMs = (System.nanoTime() - t0) / 1e6;
            assertThat(first.body()).as(p[0]).contains(p[2]);
            double[] warm = new double[WARM_REPEATS];
            for (int i = 0; i < WARM_REPEATS; i++) {
                long t = System.nanoTime();
                Http.get(base + p[1]);
                warm[i] = (System.nanoTime() - t) / 1e6;
            }
            java.util.Arrays.sort(warm);
            out.add(new Timing(
                    p[0],
                    p[3],
                    first.statusCode(),
                    firstMs,
                    warm[WARM_REPEATS / 2],
                    first.body().length()));
        }
        return out;
    }

    private static final java.net.http.HttpClient SLOW = java.net.http.HttpClient.newBuilder()
            .followRedirects(java.net.http.HttpClient.Redirect.NEVER)
            .build();

    /**
     * A first request, which may build a run's results explorer index (every receipt read once): on a machine shared
     * with other builds that can take longer than {@link Http}'s 60 s, and it is measured, not bounded.
     */
    private static HttpResponse<String> slowGet(String url) {
        try {
            return SLOW.send(
                    java.net.http.HttpRequest.newBuilder(java.net.URI.create(url))
                            .timeout(java.time.Duration.ofMinutes(15))
                            .GET()
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /**
     * Prints every request's figures, then the rows of docs/benchmarks.md, "Results explorer and matrix", in its
     * order and with its labels, ready to paste there.
     */
    private static void print(List<Timing> timings, int matrixRuns) {
        System.out.printf(Locale.ROOT, "dashboard on a %,d-case run, server -Xmx%s:%n", CASES, HEAP);
        table(timings, false);
        System.out.printf(
                Locale.ROOT,
                "docs/benchmarks.md, \"Results explorer and matrix\": %,d cases, %d runs in the matrix, server -Xmx%s:%n",
                CASES,
                matrixRuns,
                HEAP);
        table(timings.stream().filter(t -> t.doc() != null).toList(), true);
    }

    private static void table(List<Timing> timings, boolean doc) {
        System.out.println("| page | first (ms) | warm median (ms) | bytes |");
        System.out.println("|---|---:|---:|---:|");
        for (Timing t : timings) {
            System.out.printf(
                    Locale.ROOT,
                    "| %s | %,.0f | %,.0f | %,d |%n",
                    doc ? t.doc() : t.what(),
                    t.firstMillis(),
                    t.warmMillis(),
                    t.bytes());
        }
    }

    /** The sum of a heap metric over its pools. */
    private static double heap(String metrics, String name) {
        Matcher m = Pattern.compile("(?m)^" + name + "\\{area=\"heap\"[^}]*} ([0-9.eE+-]+)$")
                .matcher(metrics);
        double sum = 0;
        while (m.find()) {
            double v = Double.parseDouble(m.group(1));
            if (v > 0) {
                sum += v;
            }
        }
        return sum;
    }
}
