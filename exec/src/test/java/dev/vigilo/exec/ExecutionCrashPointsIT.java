package dev.vigilo.exec;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.vigilo.agent.OpenAiTestServer;
import dev.vigilo.common.crash.CrashSweep;
import dev.vigilo.storage.ObjectRef;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Crash-point sweep of execution: a child process admitting a small run (3 chunks) and working it to settlement with
 * one worker is halted at one durable boundary (the admission lease, seeding, the admission's acknowledgement and
 * activation, a chunk's claim, its receipt's temporary write, link and temporary-file removal, its completion, the
 * run marked running, the settlement commit); a worker in this JVM then finishes the run (resuming the admission and
 * reclaiming the dead worker's chunk once their leases expired). The run ends settled with the uninterrupted run's
 * verdict and gate table, and every case is counted exactly once with the uninterrupted run's gate outcomes.
 */
class ExecutionCrashPointsIT {
    /**
     * Halts in CI: the 300 transcripts add three storage boundaries per case around the 21 of the execution protocol
     * (admission, claims, receipts, completions, settlement), so the sweep halts at every protocol boundary, the three
     * before it (a receipt's own writes) and the one after it, and at random transcript writes up to this many ({@code -Dvigilo.crash.exhaustive=true}: all).
     */
    static final int LIMIT = 48;
    /** A boundary name occurring at most this often in the trace is a protocol step (a claim per chunk, ...). */
    static final int RARE_STEP = 3;

    static final int CASES = 300;
    // Chunk and admission leases long enough for a child on a loaded machine to renew them in time; after a halt
    // the sweep waits until the dead child's leases have expired (in parallel, before the serial check).
    static final long LEASE_MS = 3000;
    static final long ADMISSION_LEASE_MS = 8000;
    static final Duration CHILD_TIMEOUT = Duration.ofSeconds(120);
    private static final Pattern QUESTION = Pattern.compile("what is (\\d+) \\* 2");

    @TempDir
    Path dir;

    @Test
    @Timeout(value = 30, unit = TimeUnit.MINUTES) // the exhaustive sweep; the default selection takes minutes
    void aRunHaltedAtAnyDurableBoundaryIsFinishedByAnotherWorkerWithTheSameResults() throws Exception {
        try (OpenAiTestServer llm = OpenAiTestServer.start()) {
            llm.answerWith(req -> {
                Matcher m = QUESTION.matcher(req.lastUserMessage());
                long i = m.find() ? Long.parseLong(m.group(1)) : -1;
                return OpenAiTestServer.Reply.content(i % 4 == 0 ? "nope" : Long.toString(i * 2));
            });
            String profile = """
                    name: crash-points
                    agent: {kind: http, url: "%s", model: m, max_attempts: 1, timeout_seconds: 10}
                    evaluators:
                      - {name: exact, kind: exact_match}
                      - {name: digits, kind: regex, pattern: "^[0-9]+$", applies_to: {groups: [math]}}
                    gates:
                      - {name: all, required_evaluators: [exact], min_pass_rate: 0.7}
                      - {name: math, required_evaluators: [exact, digits], min_pass_rate: 0.9}
                    """.formatted(llm.chatUrl());
            CrashSweep sweep =
                    new CrashSweep(ExecWorkloadMain.class.getName(), List.of("-Xmx256m"), dir.resolve("children"));

            // One dataset and one prepared run, copied (database and store) for the clean run and for every halt.
            ExecFixture template = new ExecFixture(dir.resolve("template"), CASES);
            UUID run = template.prepare(profile);
            template.close();

            Map<String, Object> expected;
            List<String> boundaries;
            try (ExecFixture clean = ExecFixture.copyOf(template, dir.resolve("clean"))) {
                boundaries = sweep.trace(CHILD_TIMEOUT, args(clean, run));
                expected = outcome(clean, run);
            }
            System.out.println("execution boundaries: " + countByName(boundaries));
            assertThat(expected.get("status")).isEqualTo("settled");

            CrashSweep.Selection selection = CrashSweep.selectAroundRareSteps(boundaries, RARE_STEP, LIMIT);
            Map<Integer, ExecFixture> fixtures = new ConcurrentHashMap<>();
            CrashSweep.forEach(
                    selection,
                    // A halted child's leases run out while it waits, not on a processor: one more than the cores.
                    CrashSweep.parallelism() + 1,
                    point -> {
                        ExecFixture fx = ExecFixture.copyOf(template, dir.resolve("halt-" + point));
                        fixtures.put(point, fx);
                        CrashSweep.Outcome o = sweep.haltAt(point, CHILD_TIMEOUT, args(fx, run));
                        awaitLeasesExpired(fx, run);
                        return o;
                    },
                    (point, halted) -> {
                        String where = "boundary " + point + " (" + boundaries.get(point - 1) + "), " + selection;
                        try (ExecFixture fx = fixtures.remove(point);
                                Placements placements = Placements.open(fx.control, ExecutionConfig.defaults())) {
                            assertThat(halted.halted())
                                    .as(where + ": " + halted.err())
                                    .isTrue();
                            ExecWorkloadMain.worker(placements, fx.storage, Duration.ofMillis(LEASE_MS));
                            assertThat(outcome(fx, run)).as(where).isEqualTo(expected);
                        }
                    });
            System.out.println("execution crash sweep: " + selection.points().size() + " halts of " + boundaries.size()
                    + " boundaries");
        }
    }

    private static String[] args(ExecFixture fx, UUID run) {
        return new String[] {
            fx.controlUrl,
            fx.storeRoot.toString(),
            run.toString(),
            Long.toString(LEASE_MS),
            Long.toString(ADMISSION_LEASE_MS)
        };
    }

    /** Waits until no live lease of the halted child is left: its admission lease and its chunk leases. */
    private static void awaitLeasesExpired(ExecFixture fx, UUID run) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (System.nanoTime() < deadline) {
            boolean live = fx.control.jdbi().withHandle(h -> {
                boolean admission = h.createQuery("SELECT EXISTS (SELECT 1 FROM runs WHERE run_id = :r"
                                + " AND creation_lease_expires_at >= clock_timestamp())")
                        .bind("r", run)
                        .mapTo(Boolean.class)
                        .one();
                boolean seeded = h.createQuery("SELECT to_regclass('vigilo_exec.exec_chunks') IS NOT NULL")
                        .mapTo(Boolean.class)
                        .one();
                return admission
                        || seeded
                                && h.createQuery("SELECT EXISTS (SELECT 1 FROM vigilo_exec.exec_chunks"
                                                + " WHERE run_id = :r AND state = 'leased'"
                                                + " AND lease_expires_at >= clock_timestamp())")
                                        .bind("r", run)
                                        .mapTo(Boolean.class)
                                        .one();
            });
            if (!live) {
                return;
            }
            Thread.sleep(100);
        }
        throw new AssertionError("the halted child's leases did not expire within 60 s");
    }

    /**
     * The run's end state without ids and times: status, verdict, gate table, and per case ordinal its gate outcomes
     * (each ordinal once among the counted receipts).
     */
    private static Map<String, Object> outcome(ExecFixture fx, UUID run) {
        Map<String, Object> out = new LinkedHashMap<>();
        fx.control.jdbi().useHandle(h -> {
            out.put(
                    "status",
                    h.createQuery("SELECT status FROM runs WHERE run_id = :r")
                            .bind("r", run)
                            .mapTo(String.class)
                            .one());
            out.put(
                    "verdict",
                    String.valueOf(h.createQuery("SELECT verdict FROM runs WHERE run_id = :r")
                            .bind("r", run)
                            .mapTo(String.class)
                            .one()));
            out.put(
                    "gates",
                    h.createQuery("SELECT name, planned, passed, failed, errored, passed_gate FROM run_gate_results"
                                    + " WHERE run_id = :r ORDER BY gate_index")
                            .bind("r", run)
                            .mapToMap()
                            .list()
                            .toString());
        });
        TreeMap<Integer, String> cases = new TreeMap<>();
        try (Placements placements = Placements.open(fx.control, ExecutionConfig.defaults())) {
            for (ObjectRef ref : IndependentTally.receipts(placements, run)) {
                JsonNode receipt = IndependentTally.read(fx.store, ref);
                for (JsonNode c : receipt.path("cases")) {
                    String previous =
                            cases.put(c.path("ordinal").asInt(), c.path("gates").toString());
                    assertThat(previous)
                            .as("case %s counted twice", c.path("ordinal"))
                            .isNull();
                }
            }
        }
        out.put("case count", cases.size());
        out.put("cases", cases);
        return out;
    }

    private static Map<String, Integer> countByName(List<String> names) {
        Map<String, Integer> counts = new LinkedHashMap<>();
        names.forEach(n -> counts.merge(n, 1, Integer::sum));
        return counts;
    }
}
