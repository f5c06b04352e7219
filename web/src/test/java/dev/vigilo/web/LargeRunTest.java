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
 * for the benchmark of docs/benchmarks.md, "Dashboard") served by the dashboard in its own JVM with {@code -Xmx256m}:
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

    /** One timed request: the first answer and the median of the warm repeats. */
    record Timing(String what, int status, double firstMillis, double warmMillis, int bytes) {}

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
                print(timings);
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
        String r = "/runs/" + run;
        StringBuilder mx = new StringBuilder("/matrix?");
        matrixRuns.forEach(x -> mx.append("run=").append(x).append('&'));
        List<String[]> pages = List.of(
                new String[] {"matrix of " + matrixRuns.size() + " runs, first page", mx + "show=all", "id=\"matrix\""},
                new String[] {"matrix, page at 90%", mx + "show=all&after=" + (CASES * 9 / 10), "Next page"},
                new String[] {"matrix, different only", mx + "show=different", "id=\"matrix-runs\""},
                new String[] {"run list", "/runs", "settled"},
                new String[] {"run list (API)", "/api/runs", "\"cases_done\":" + CASES},
                new String[] {"run page", r, "id=\"gates\""},
                new String[] {"run status (API)", "/api/runs/" + run, "\"cases_done\":" + CASES},
                new String[] {"throughput (API)", "/api/runs/" + run + "/throughput", "\"points\""},
                new String[] {"cases, first page", r + "/cases", "case-0<"},
                new String[] {"cases, page at 90%", r + "/cases?after=" + (CASES * 9 / 10), "Next page"},
                new String[] {"failed cases", r + "/cases?outcome=failed", "verdict-failed"},
                new String[] {"errored cases", r + "/cases?outcome=errored", "verdict-errored"},
                new String[] {"passed cases", r + "/cases?outcome=passed", "verdict-passed"},
                new String[] {"cases (API, 500)", "/api" + r + "/cases?limit=500", "\"next_after\":499"},
                // The results explorer (its index was built by the first cases page above; warm figures read it).
                new String[] {"explorer: search", r + "/cases?q=CASE-" + (CASES - 7), "case-" + (CASES - 7) + "<"},
                new String[] {
                    "explorer: failed, by time", r + "/cases?outcome=failed&sort=time&order=desc", "verdict-failed"
                },
                new String[] {
                    "explorer: by score, page at 90%", r + "/cases?sort=score&after=" + (CASES * 9 / 10), "Next page"
                },
                new String[] {
                    "explorer: search + filter (API, 500)",
                    "/api" + r + "/cases?q=case-1&outcome=passed&sort=cost&order=desc&limit=500",
                    "\"total\":"
                },
                new String[] {
                    "explorer: a case in a filtered list", r + "/cases/" + CASES / 2 + "?sort=time", "id=\"list-place\""
                },
                new String[] {"first case", r + "/cases/0", "id=\"case-input\""},
                new String[] {"middle case", r + "/cases/" + CASES / 2, "case-" + CASES / 2},
                new String[] {"last case", r + "/cases/" + last, "case-" + last},
                new String[] {"dataset, last page", "/datasets/" + dataset + "?from=" + (CASES - 50), "case-" + last},
                new String[] {"metrics", "/metrics", "vigilo_runs{status=\"settled\"} " + matrixRuns.size() + ".0"});
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

    private static void print(List<Timing> timings) {
        System.out.printf(Locale.ROOT, "dashboard on a %,d-case run, server -Xmx%s:%n", CASES, HEAP);
        System.out.println("| page | first (ms) | warm median (ms) | bytes |");
        System.out.println("|---|---:|---:|---:|");
        for (Timing t : timings) {
            System.out.printf(
                    Locale.ROOT, "| %s | %.0f | %.0f | %,d |%n", t.what(), t.firstMillis(), t.warmMillis(), t.bytes());
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
