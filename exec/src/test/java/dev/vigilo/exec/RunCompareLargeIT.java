package dev.vigilo.exec;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigilo.dataset.DatasetCatalog;
import dev.vigilo.dataset.DatasetEntry;
import dev.vigilo.dataset.UploadProgress;
import dev.vigilo.dataset.UploadRequest;
import dev.vigilo.exec.admission.Admission;
import dev.vigilo.exec.settlement.Settlement;
import dev.vigilo.plan.CreateRequest;
import dev.vigilo.plan.ProfileInput;
import dev.vigilo.plan.RunPreparation;
import dev.vigilo.plan.RunState;
import java.io.BufferedWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code run compare} on runs of 100,000 cases ({@link #CASES}) in a child JVM with {@code -Xmx256m}: two runs of one dataset (merged
 * by ordinal) and a run over a second dataset sharing half the ids in another order (sorted on disk by id). The runs'
 * receipts are made up deterministically ({@link SimulatedWorker}, a different salt per run so that outcomes differ);
 * the comparison reads them through the real execution records. Prints the time and peak heap of each comparison
 * (docs/benchmarks.md).
 */
class RunCompareLargeIT {
    /**
     * Cases per run: 100,000 for the figures in docs/benchmarks.md ({@code -Dvigilo.compare.cases=100000}); a tenth of
     * that by default, so that a routine {@code verify} stays short. A multiple of 200 (whole chunks, half shared).
     */
    private static final int CASES = Integer.getInteger("vigilo.compare.cases", 10_000);

    private static final Pattern RESULT = Pattern.compile(
            "RESULT same=(\\w+) compared=(\\d+) flipped=(\\d+) listened=(\\d+) only_a=(\\d+) only_b=(\\d+) ms=(\\d+)"
                    + " peak_heap_mib=([0-9.]+) raw_ms=(\\d+)");

    @TempDir
    Path dir;

    @Test
    void comparesRunsOf100kCasesIn256MiB() throws Exception {
        long start = System.nanoTime();
        try (ExecFixture fx = new ExecFixture(dir, CASES);
                Placements placements = Placements.open(fx.control, ExecutionConfig.defaults())) {
            System.out.println(
                    "RunCompareLargeIT: dataset uploaded in " + (System.nanoTime() - start) / 1_000_000 + " ms");
            UUID a = fx.prepare();
            UUID b = fx.prepare();
            Path second = dir.resolve("second.jsonl");
            try (BufferedWriter w = Files.newBufferedWriter(second, StandardCharsets.UTF_8)) {
                for (int i = CASES + CASES / 2 - 1; i >= CASES / 2; i--) {
                    String group = i % 3 == 0 ? ",\"group\":\"math\"" : "";
                    w.write("{\"id\":\"case-" + i + "\",\"input\":\"what is " + i + " * 2\",\"expected\":\"" + (i * 2)
                            + "\"" + group + "}\n");
                }
            }
            DatasetEntry other = new DatasetCatalog(fx.control.jdbi())
                    .upload(
                            new UploadRequest(second, Optional.of("second"), Optional.of(UUID.randomUUID())),
                            fx.store,
                            UploadProgress.NONE);
            UUID c = new RunPreparation(fx.control.jdbi(), fx.storage)
                    .create(new CreateRequest(
                            ProfileInput.inline(ExecFixture.PROFILE), other.uploadId(), Optional.empty(), true))
                    .runId();
            fx.control
                    .jdbi()
                    .useHandle(h -> h.createUpdate("UPDATE run_plans SET execution_requested = true WHERE run_id = :r")
                            .bind("r", c)
                            .execute());
            System.out.println(
                    "RunCompareLargeIT: prepared 3 runs after " + (System.nanoTime() - start) / 1_000_000 + " ms");
            long t0 = System.nanoTime();
            int salt = 0;
            for (UUID run : List.of(a, b, c)) {
                new Admission(placements, fx.storage).admit(run);
                int s = salt++;
                // four simulated workers per run: their claims skip each other's locked rows
                ExecutorService pool = Executors.newFixedThreadPool(4);
                List<Future<Integer>> done = new ArrayList<>();
                for (int w = 0; w < 4; w++) {
                    done.add(pool.submit(
                            () -> new SimulatedWorker(placements, fx.store, run, s).run(Integer.MAX_VALUE)));
                }
                int chunks = 0;
                for (Future<Integer> f : done) {
                    chunks += f.get();
                }
                pool.shutdown();
                assertThat(chunks).isEqualTo(CASES / 100);
                assertThat(new Settlement(placements).settleIfComplete(run).status())
                        .isEqualTo(RunState.SETTLED);
            }
            System.out.println("RunCompareLargeIT: executed 3 runs in " + (System.nanoTime() - t0) / 1_000_000 + " ms");

            Matcher same = compare(fx, a, b);
            assertThat(same.group(1)).isEqualTo("true");
            assertThat(Long.parseLong(same.group(2))).isEqualTo(CASES);
            assertThat(Long.parseLong(same.group(3))).isPositive().isEqualTo(Long.parseLong(same.group(4)));
            assertThat(same.group(5)).isEqualTo("0");
            assertThat(same.group(6)).isEqualTo("0");

            Matcher byId = compare(fx, a, c);
            assertThat(byId.group(1)).isEqualTo("false");
            assertThat(Long.parseLong(byId.group(2))).isEqualTo(CASES / 2);
            assertThat(Long.parseLong(byId.group(3))).isPositive();
            assertThat(Long.parseLong(byId.group(5))).isEqualTo(CASES / 2);
            assertThat(Long.parseLong(byId.group(6))).isEqualTo(CASES / 2);
            System.out.println("RunCompareLargeIT: " + CASES + " cases, -Xmx256m: same dataset " + same.group(7)
                    + " ms, peak heap " + same.group(8) + " MiB, " + same.group(2) + " compared, " + same.group(3)
                    + " flipped; different datasets " + byId.group(7) + " ms, peak heap " + byId.group(8) + " MiB, "
                    + byId.group(2) + " compared, " + byId.group(3) + " flipped, " + byId.group(5) + " only in each;"
                    + " raw read + SHA-256 of both runs' receipts " + same.group(9) + " ms");
        }
    }

    private static Matcher compare(ExecFixture fx, UUID a, UUID b) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(
                ProcessHandle.current().info().command().orElse("java"),
                "-Xmx256m",
                "-cp",
                System.getProperty("java.class.path"),
                CompareMain.class.getName(),
                fx.controlUrl,
                fx.storeRoot.toString(),
                a.toString(),
                b.toString()));
        long t0 = System.nanoTime();
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(10, TimeUnit.MINUTES)).isTrue();
        assertThat(p.exitValue()).as(out).isZero();
        Matcher m = RESULT.matcher(out);
        assertThat(m.find()).as(out).isTrue();
        System.out.println("RunCompareLargeIT: child process " + (System.nanoTime() - t0) / 1_000_000 + " ms");
        return m;
    }
}
