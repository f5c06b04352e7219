package dev.vigilo.exec.view;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.vigilo.common.errors.DamagedException;
import dev.vigilo.common.errors.NotFoundException;
import dev.vigilo.common.errors.UnavailableException;
import dev.vigilo.common.json.StrictJson;
import dev.vigilo.exec.ExecutionStatus;
import dev.vigilo.exec.GateResult;
import dev.vigilo.exec.LocalTransactions;
import dev.vigilo.exec.Outages;
import dev.vigilo.exec.Placements;
import dev.vigilo.exec.Service;
import dev.vigilo.exec.UsageSummary;
import dev.vigilo.exec.WaitBoard;
import dev.vigilo.exec.record.AgreementTallies;
import dev.vigilo.exec.record.BudgetTable;
import dev.vigilo.exec.record.GateTable;
import dev.vigilo.exec.record.Receipt;
import dev.vigilo.exec.record.RunLimiters;
import dev.vigilo.exec.record.RunRecords;
import dev.vigilo.exec.record.RunSnapshot;
import dev.vigilo.exec.record.RunSnapshotParser;
import dev.vigilo.exec.record.ShardTallies;
import dev.vigilo.exec.record.UsageTable;
import dev.vigilo.exec.record.UsageTallies;
import dev.vigilo.fleet.LimiterState;
import dev.vigilo.stats.KrippendorffAlpha;
import dev.vigilo.stats.PassAtK;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import java.util.UUID;
import java.util.function.Consumer;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Jdbi;

/**
 * Reads a run's {@link ExecutionStatus}: the run row, its routes, published shard totals and recorded gate table from
 * the control database (one transaction), then per execution database one snapshot transaction of aggregate SQL over
 * the chunk rows of the shards routed there. Bounded: at most 128 route rows, one aggregate per placement, no
 * object-store read. While a run executes, the gate table is computed from the sums so far and marked partial.
 *
 * <p>An execution database of the run's routes that cannot be reached does not fail the reading: its alias is listed
 * as unreachable and its shards' progress is unknown (the counts leave them out), so a status can still say what
 * workers wait for ({@link ExecutionStatus#waiting()}, read from the control database). Thread-safe.
 */
public final class ExecutionStatusReader {
    private static final ObjectMapper MAPPER = StrictJson.newMapper();

    private final Placements placements;
    private final Jdbi control;

    public ExecutionStatusReader(Placements placements) {
        this.placements = Objects.requireNonNull(placements, "placements");
        this.control = placements.control();
    }

    /** The control database's part of a reading. */
    private record ControlView(
            RunRecords.Run run,
            long expectedChunks,
            List<RunRecords.Route> routes,
            Map<Integer, long[]> shardTotals,
            List<String> gateNames,
            long[] planned,
            List<GateResult> recorded,
            List<ExecutionStatus.Wait> waiting,
            Map<String, List<Receipt.ModelUsage>> recordedUsage,
            Map<String, Map<String, KrippendorffAlpha.Sums>> recordedAgreement,
            Optional<BudgetTable.State> budget,
            List<ExecutionStatus.Limiter> limiters) {}

    /**
     * Reads the run's execution status now.
     *
     * @throws NotFoundException    no such run
     * @throws UnavailableException the control database cannot be reached, or an execution database of the run is not
     *                              in this process's execution configuration (its alias named)
     */
    public ExecutionStatus status(UUID runId) {
        Objects.requireNonNull(runId, "runId");
        ControlView v = control.inTransaction(h -> readControl(h, runId));
        Map<Integer, ShardTallies.Tally> tallies = new HashMap<>();
        Map<String, List<Receipt.ModelUsage>> usage = new TreeMap<>();
        Map<String, Map<String, KrippendorffAlpha.Sums>> agreement = new TreeMap<>();
        Optional<RunSnapshot> snapshot = Optional.empty();
        List<String> unreachable = new ArrayList<>();
        for (var g : RunRecords.byPlacement(v.routes()).entrySet()) {
            String alias = g.getKey();
            Jdbi jdbi = placements.jdbi(alias);
            Optional<RunSnapshot> read;
            try {
                read = LocalTransactions.inSnapshot(
                        jdbi, "status of run " + runId + " in execution database \"" + alias + "\"", h -> {
                            Optional<RunSnapshot> s = h.createQuery("SELECT snapshot FROM exec_runs WHERE run_id = :r")
                                    .bind("r", runId)
                                    .mapTo(String.class)
                                    .findOne()
                                    .map(RunSnapshotParser::fromJson);
                            tallies.putAll(ShardTallies.read(
                                    h,
                                    runId,
                                    g.getValue(),
                                    v.gateNames().size(),
                                    s.map(RunSnapshot::epochs).orElse(1)));
                            // A run that recorded no usage at settlement (no model calls, or settled before usage
                            // existed) is read from its chunk rows, which know which of the two it is.
                            if (v.recordedUsage().isEmpty()) {
                                usage.putAll(UsageTallies.plus(usage, UsageTallies.read(h, runId, g.getValue())));
                            }
                            if (!recordedRun(v)) {
                                agreement.putAll(AgreementTallies.plus(
                                        agreement, AgreementTallies.read(h, runId, g.getValue())));
                            }
                            return s;
                        });
            } catch (UnavailableException e) {
                if (!Outages.isOutageOf(Service.DATABASE, e)) {
                    throw e;
                }
                unreachable.add(alias);
                continue;
            }
            if (snapshot.isEmpty()) {
                snapshot = read;
            }
        }
        Collections.sort(unreachable);
        List<ExecutionStatus.ShardProgress> shards = new ArrayList<>();
        long done = 0;
        long failed = 0;
        long casesDone = 0;
        long expired = 0;
        for (RunRecords.Route r : v.routes()) {
            long[] totals = v.shardTotals().getOrDefault(r.shard(), new long[2]);
            if (unreachable.contains(r.placement())) {
                shards.add(new ExecutionStatus.ShardProgress(
                        r.shard(), r.placement(), r.state(), totals[1], -1, -1, totals[0], -1));
                continue;
            }
            ShardTallies.Tally t = tallies.get(r.shard());
            long d = t == null ? 0 : t.chunksDone();
            long f = t == null ? 0 : t.chunksFailed();
            long c = t == null ? 0 : t.casesDone();
            shards.add(new ExecutionStatus.ShardProgress(
                    r.shard(), r.placement(), r.state(), totals[1], d, f, totals[0], c));
            done += d;
            failed += f;
            casesDone += c;
            expired += t == null ? 0 : t.chunksExpired();
        }
        long cases = v.shardTotals().values().stream().mapToLong(x -> x[0]).sum();
        ExecutionStatus.Progress progress = new ExecutionStatus.Progress(
                v.expectedChunks(), done, failed, cases, casesDone, shards, unreachable, expired);
        boolean recorded = !v.recorded().isEmpty();
        List<GateResult> gates = recorded ? v.recorded() : partial(v, tallies, snapshot);
        return new ExecutionStatus(
                runId,
                v.run().status().spelling(),
                v.run().verdict(),
                v.run().failureReason(),
                progress,
                gates,
                recorded,
                v.waiting(),
                summaries(v.recordedUsage().isEmpty() ? usage : v.recordedUsage()),
                alphas(recordedRun(v) ? v.recordedAgreement() : agreement),
                v.run()
                        .pauseReason()
                        .map(x ->
                                new ExecutionStatus.Paused(x, v.run().pausedAt().orElseThrow())),
                v.budget().map(BudgetTable.State::status),
                v.limiters());
    }

    /** Whether settlement recorded the run's tables (its agreement is then read from them). */
    private static boolean recordedRun(ControlView v) {
        return !v.recorded().isEmpty();
    }

    private static Map<String, Map<String, ExecutionStatus.Agreement>> alphas(
            Map<String, Map<String, KrippendorffAlpha.Sums>> byScope) {
        Map<String, Map<String, ExecutionStatus.Agreement>> out = new TreeMap<>();
        byScope.forEach((scope, panels) -> {
            Map<String, ExecutionStatus.Agreement> m = new TreeMap<>();
            panels.forEach(
                    (panel, sums) -> m.put(panel, new ExecutionStatus.Agreement(sums.n(), KrippendorffAlpha.of(sums))));
            out.put(scope, m);
        });
        return out;
    }

    private static Map<String, UsageSummary> summaries(Map<String, List<Receipt.ModelUsage>> byScope) {
        Map<String, UsageSummary> out = new TreeMap<>();
        byScope.forEach((scope, models) -> out.put(scope, UsageTallies.summary(models)));
        return out;
    }

    /**
     * Reads the status every {@code interval}, passes each reading to {@code listener}, and returns the last one once
     * the run is settled, failed or cancelled (the live view behind {@code vigilo run watch}).
     *
     * @throws InterruptedException when the calling thread is interrupted (Ctrl-C)
     */
    public ExecutionStatus watch(UUID runId, Duration interval, Consumer<ExecutionStatus> listener)
            throws InterruptedException {
        Objects.requireNonNull(interval, "interval");
        Objects.requireNonNull(listener, "listener");
        while (true) {
            ExecutionStatus s = status(runId);
            listener.accept(s);
            if (s.finished()) {
                return s;
            }
            Thread.sleep(interval.toMillis());
        }
    }

    private static ControlView readControl(Handle h, UUID runId) {
        RunRecords.Run run = RunRecords.run(h, runId);
        long expected = h.createQuery("SELECT expected_chunks FROM run_plans WHERE run_id = :r")
                .bind("r", runId)
                .mapTo(Long.class)
                .one();
        List<RunRecords.Route> routes = RunRecords.routes(h, runId, "");
        Map<Integer, long[]> totals = new LinkedHashMap<>();
        List<String> names = new ArrayList<>();
        List<long[]> perShard = new ArrayList<>();
        h.createQuery("SELECT shard, cases, chunks, gate_counts FROM run_plan_shards WHERE run_id = :r ORDER BY shard")
                .bind("r", runId)
                .mapToMap()
                .forEach(m -> {
                    totals.put(
                            ((Number) m.get("shard")).intValue(),
                            new long[] {((Number) m.get("cases")).longValue(), ((Number) m.get("chunks")).longValue()});
                    JsonNode pairs = json(runId, (String) m.get("gate_counts"));
                    if (names.isEmpty()) {
                        pairs.forEach(p -> names.add(p.path(0).asText()));
                    }
                    long[] counts = new long[pairs.size()];
                    for (int i = 0; i < pairs.size(); i++) {
                        counts[i] = pairs.get(i).path(1).asLong();
                    }
                    perShard.add(counts);
                });
        long[] planned = new long[names.size()];
        for (long[] counts : perShard) {
            for (int i = 0; i < planned.length && i < counts.length; i++) {
                planned[i] += counts[i];
            }
        }
        List<GateResult> recorded = GateTable.results(h, runId);
        return new ControlView(
                run,
                expected,
                routes,
                totals,
                names,
                planned,
                recorded,
                WaitBoard.forRun(h, runId),
                UsageTable.read(h, runId),
                AgreementTallies.recorded(h, runId),
                BudgetTable.read(h, runId),
                limiters(h, runId));
    }

    /** The fleet limiters of the run's endpoints, as the fleet shares them now. */
    private static List<ExecutionStatus.Limiter> limiters(Handle h, UUID runId) {
        List<ExecutionStatus.Limiter> out = new ArrayList<>();
        for (RunLimiters.RunLimiter r : RunLimiters.forRun(h, runId)) {
            LimiterState s = r.state();
            out.add(new ExecutionStatus.Limiter(
                    r.at(),
                    s.endpoint(),
                    s.limits().requestsPerMinute(),
                    s.limits().tokensPerMinute(),
                    s.limits().maxInFlight(),
                    s.rateFactor(),
                    s.rateReason(),
                    s.rateChangedAt(),
                    s.circuit().wire(),
                    s.circuitSince(),
                    s.circuitReason()));
        }
        return out;
    }

    /** The gate table so far: counts of done chunks against the planned totals; no decision yet. */
    private static List<GateResult> partial(
            ControlView v, Map<Integer, ShardTallies.Tally> tallies, Optional<RunSnapshot> snapshot) {
        if (snapshot.isEmpty()) {
            return List.of();
        }
        List<GateResult> out = new ArrayList<>();
        List<RunSnapshot.Gate> policy = snapshot.get().gates();
        for (int g = 0; g < v.gateNames().size() && g < policy.size(); g++) {
            ShardTallies.GateSum sum = ShardTallies.sum(tallies.values(), g);
            long planned = Math.max(v.planned()[g], sum.passed() + sum.failed() + sum.errored());
            GateResult partial = GateResult.partial(
                    v.gateNames().get(g),
                    planned,
                    sum.passed(),
                    sum.failed(),
                    sum.errored(),
                    policy.get(g).minPassRate(),
                    policy.get(g).decide(),
                    policy.get(g).confidence());
            int epochs = snapshot.get().epochs();
            if (epochs > 1) {
                partial = partial.withPassAtK(PassAtK.of(ShardTallies.epochPasses(tallies.values(), g, epochs)));
            }
            out.add(partial);
        }
        return out;
    }

    private static JsonNode json(UUID runId, String text) {
        try {
            return MAPPER.readTree(text);
        } catch (IOException e) {
            throw new DamagedException("run " + runId + ": the published gate counts of a shard cannot be read ("
                    + e.getMessage() + "); the control record run_plan_shards was altered");
        }
    }
}
