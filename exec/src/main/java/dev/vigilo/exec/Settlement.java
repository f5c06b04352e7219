package dev.vigilo.exec;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.vigilo.common.errors.DamagedException;
import dev.vigilo.common.errors.NotFoundException;
import dev.vigilo.common.errors.UnavailableException;
import dev.vigilo.plan.PublishedPlan;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import java.util.UUID;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Jdbi;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Settles a run once no chunk of it is queued or leased (docs/execution.md, "Settlement"): per shard, from the route's
 * current execution database only, it sums the chunk rows' tallies and folds the chunk identities with the plan's
 * settlement fold, compares both with the frozen shard snapshot and the control database's published shard rows, and
 * then records the gate table and the verdict in one control transaction. No object-storage read happens anywhere in
 * it, inside a transaction or not.
 *
 * <p>Outcomes: every chunk done and the records consistent: {@code settled} with verdict {@code passed} (every gate
 * met its threshold) or {@code failed}. Some chunk failed: the run ends {@code failed}, the gate table is still
 * written (cases of failed chunks count as never run) and no verdict is given. Records that contradict the plan
 * (fold, counts, tallies): the run ends {@code failed} with the damage named, without a gate table.
 *
 * <p>Safe to call repeatedly and concurrently: the control transaction locks the run row, acts only from
 * {@code pending}/{@code running}, and rechecks that no route moved since the reads. An unreachable execution
 * database is an {@link UnavailableException} naming its alias, and nothing changes. Thread-safe.
 */
final class Settlement {
    private static final Logger LOG = LoggerFactory.getLogger(Settlement.class);
    private static final ObjectMapper MAPPER = new ObjectMapper();
    /** Failed chunks a failure reason names (the rest are counted). */
    static final int NAMED_FAILURES = 3;

    /** What {@link #settleIfComplete} did. */
    enum Outcome {
        /** This call settled the run (verdict recorded). */
        SETTLED,
        /** This call ended the run failed: a chunk failed, or the execution records are damaged. */
        FAILED,
        /** Chunks are still queued or leased, or a shard is being moved; nothing changed. */
        NOT_COMPLETE,
        /** The run is not executing (creating or cancelled); nothing changed. */
        NOT_ACTIVE,
        /** The run had already been settled or failed; nothing changed. */
        ALREADY_ENDED
    }

    /**
     * @param status the run's status afterwards
     * @param verdict the verdict, when settled
     * @param detail why nothing happened, or the failure reason
     * @param gates the gate table this call wrote (empty otherwise)
     */
    record Result(
            UUID runId,
            Outcome outcome,
            String status,
            Optional<String> verdict,
            Optional<String> detail,
            List<GateResult> gates) {
        static Result of(UUID runId, Outcome outcome, String status, String detail) {
            return new Result(runId, outcome, status, Optional.empty(), Optional.of(detail), List.of());
        }
    }

    private final Placements placements;
    private final Jdbi control;

    Settlement(Placements placements) {
        this.placements = Objects.requireNonNull(placements, "placements");
        this.control = placements.control();
    }

    /**
     * Settles the run if every chunk ended.
     *
     * @throws NotFoundException    no such run
     * @throws UnavailableException an execution database failed; nothing changed, call again later
     */
    Result settleIfComplete(UUID runId) {
        Objects.requireNonNull(runId, "runId");
        RunRecords.Run run = control.withHandle(h -> RunRecords.run(h, runId));
        if (!run.active()) {
            return notActive(run);
        }
        List<RunRecords.Route> routes = control.withHandle(h -> RunRecords.routes(h, runId, ""));
        if (routes.isEmpty()) {
            return Result.of(runId, Outcome.NOT_COMPLETE, run.status(), "the run has no shard routes yet");
        }
        for (RunRecords.Route r : routes) {
            if (!r.active()) {
                return Result.of(runId, Outcome.NOT_COMPLETE, run.status(), "shard " + r.shard() + " is " + r.state());
            }
        }
        Map<String, List<Integer>> groups = RunRecords.byPlacement(routes);
        for (var g : groups.entrySet()) {
            boolean open = LocalTransactions.inTransaction(
                    placements.jdbi(g.getKey()),
                    what(runId, g.getKey()),
                    h -> ShardTallies.anyOpen(h, runId, g.getValue()));
            if (open) {
                return Result.of(
                        runId,
                        Outcome.NOT_COMPLETE,
                        run.status(),
                        "chunks are still queued or leased in execution database \"" + g.getKey() + "\"");
            }
        }
        Evidence ev = new Evidence(runId);
        ev.readPublished(control);
        for (var g : groups.entrySet()) {
            ev.readPlacement(g.getKey(), g.getValue());
        }
        ev.check(routes);
        return commit(run, routes, ev);
    }

    private static String what(UUID runId, String alias) {
        return "settlement of run " + runId + " in execution database \"" + alias + "\"";
    }

    private static Result notActive(RunRecords.Run run) {
        boolean ended = "settled".equals(run.status()) || "failed".equals(run.status());
        return new Result(
                run.runId(),
                ended ? Outcome.ALREADY_ENDED : Outcome.NOT_ACTIVE,
                run.status(),
                run.verdict(),
                Optional.of("the run is " + run.status()),
                List.of());
    }

    /** The single control transaction: rechecks status and routes, then records the outcome. */
    private Result commit(RunRecords.Run read, List<RunRecords.Route> routes, Evidence ev) {
        UUID runId = read.runId();
        Result r = control.inTransaction(h -> {
            RunRecords.Run now = RunRecords.lock(h, runId, true);
            if (!now.active()) {
                return notActive(now);
            }
            if (!RunRecords.routes(h, runId, "FOR SHARE").equals(routes)) {
                return Result.of(runId, Outcome.NOT_COMPLETE, now.status(), "a shard route changed while settling");
            }
            if (!ev.problems.isEmpty()) {
                String reason = "run " + runId + ": its execution records are damaged: " + ev.problems.get(0)
                        + (ev.problems.size() > 1 ? " (and " + (ev.problems.size() - 1) + " more)" : "")
                        + "; its results cannot be settled, create a new run";
                end(h, runId, "failed", null, reason);
                return new Result(runId, Outcome.FAILED, "failed", Optional.empty(), Optional.of(reason), List.of());
            }
            List<GateResult> gates = ev.gateTable();
            insertGates(h, runId, gates);
            if (ev.failedChunks > 0) {
                String reason = ev.failureReason();
                end(h, runId, "failed", null, reason);
                return new Result(runId, Outcome.FAILED, "failed", Optional.empty(), Optional.of(reason), gates);
            }
            String verdict = gates.stream().allMatch(g -> g.passedGate().orElse(false)) ? "passed" : "failed";
            end(h, runId, "settled", verdict, null);
            return new Result(runId, Outcome.SETTLED, "settled", Optional.of(verdict), Optional.empty(), gates);
        });
        if (r.outcome() == Outcome.SETTLED || r.outcome() == Outcome.FAILED) {
            LOG.info(
                    "run {} {}{}",
                    runId,
                    r.status(),
                    r.verdict()
                            .map(v -> ": verdict " + v)
                            .orElse(r.detail().map(d -> ": " + d).orElse("")));
        }
        return r;
    }

    private static void end(Handle h, UUID runId, String status, String verdict, String reason) {
        h.createUpdate("UPDATE runs SET status = :s, verdict = :v, failure_reason = :x, dispatchable = false,"
                        + " finished_at = now(), updated_at = now() WHERE run_id = :r")
                .bind("s", status)
                .bind("v", verdict)
                .bind("x", reason)
                .bind("r", runId)
                .execute();
    }

    private static void insertGates(Handle h, UUID runId, List<GateResult> gates) {
        var batch = h.prepareBatch("INSERT INTO run_gate_results (run_id, gate_index, name, planned, passed, failed,"
                + " errored, min_pass_rate, passed_gate) VALUES (:r, :i, :n, :p, :ps, :f, :e, :m, :ok)");
        for (int i = 0; i < gates.size(); i++) {
            GateResult g = gates.get(i);
            batch.bind("r", runId)
                    .bind("i", i)
                    .bind("n", g.name())
                    .bind("p", g.planned())
                    .bind("ps", g.passed())
                    .bind("f", g.failed())
                    .bind("e", g.errored())
                    .bind("m", g.minPassRate())
                    .bind("ok", g.passedGate().orElseThrow())
                    .add();
        }
        batch.execute();
    }

    /** A shard's frozen snapshot row in its execution database. */
    private record ShardRow(
            int shard, long cases, long chunks, String settlement, long[] gateCounts, String state, long epoch) {}

    /** The published shard row in the control database. */
    private record PublishedShard(
            int shard, long cases, long chunks, String settlement, List<String> gateNames, long[] gateCounts) {}

    /** A failed chunk and its last error. */
    private record FailedChunk(long chunkIndex, String error) {}

    /** Everything settlement read, and what contradicts the plan; filled outside any control transaction. */
    private final class Evidence {
        final UUID runId;
        final Map<Integer, PublishedShard> published = new TreeMap<>();
        final Map<Integer, ShardRow> shards = new TreeMap<>();
        final Map<Integer, ShardTallies.Tally> tallies = new TreeMap<>();
        final Map<Integer, PublishedPlan.SettlementFold> folds = new TreeMap<>();
        final List<FailedChunk> failed = new ArrayList<>();
        final List<String> problems = new ArrayList<>();
        RunSnapshot snapshot;
        String snapshotSha;
        long failedChunks;

        Evidence(UUID runId) {
            this.runId = runId;
        }

        void readPublished(Jdbi control) {
            control.useHandle(h -> h.createQuery("SELECT shard, cases, chunks, settlement_sha256, gate_counts"
                            + " FROM run_plan_shards WHERE run_id = :r ORDER BY shard")
                    .bind("r", runId)
                    .mapToMap()
                    .forEach(m -> {
                        int shard = ((Number) m.get("shard")).intValue();
                        List<String> names = new ArrayList<>();
                        List<Long> counts = new ArrayList<>();
                        for (JsonNode pair : json((String) m.get("gate_counts"))) {
                            names.add(pair.path(0).asText());
                            counts.add(pair.path(1).asLong());
                        }
                        published.put(
                                shard,
                                new PublishedShard(
                                        shard,
                                        ((Number) m.get("cases")).longValue(),
                                        ((Number) m.get("chunks")).longValue(),
                                        (String) m.get("settlement_sha256"),
                                        names,
                                        counts.stream()
                                                .mapToLong(Long::longValue)
                                                .toArray()));
                    }));
        }

        /** One placement: a snapshot of its shard rows and sums, then its chunk identities in ordered pages. */
        void readPlacement(String alias, List<Integer> assigned) {
            Jdbi local = placements.jdbi(alias);
            LocalTransactions.inSnapshot(local, what(runId, alias), h -> {
                Optional<Map<String, Object>> run = h.createQuery(
                                "SELECT snapshot_sha256, snapshot FROM exec_runs WHERE run_id = :r")
                        .bind("r", runId)
                        .mapToMap()
                        .findOne();
                if (run.isEmpty()) {
                    problems.add("execution database \"" + alias + "\" has no snapshot of the run");
                    return null;
                }
                String sha = (String) run.get().get("snapshot_sha256");
                if (snapshot == null) {
                    snapshot = decodeSnapshot((String) run.get().get("snapshot"), sha, alias);
                    snapshotSha = sha;
                } else if (!snapshotSha.equals(sha)) {
                    problems.add("the run snapshot in execution database \"" + alias + "\" differs from another's");
                }
                if (snapshot == null) {
                    return null;
                }
                h.createQuery("SELECT shard, cases, chunks, settlement_sha256, gate_counts, state, route_epoch"
                                + " FROM exec_run_shards WHERE run_id = :r AND shard = ANY(:s)")
                        .bind("r", runId)
                        .bindArray("s", Integer.class, assigned)
                        .mapToMap()
                        .forEach(m -> {
                            int shard = ((Number) m.get("shard")).intValue();
                            long[] counts = localCounts((String) m.get("gate_counts"), alias, shard);
                            shards.put(
                                    shard,
                                    new ShardRow(
                                            shard,
                                            ((Number) m.get("cases")).longValue(),
                                            ((Number) m.get("chunks")).longValue(),
                                            (String) m.get("settlement_sha256"),
                                            counts,
                                            (String) m.get("state"),
                                            ((Number) m.get("route_epoch")).longValue()));
                        });
                tallies.putAll(
                        ShardTallies.read(h, runId, assigned, snapshot.gates().size()));
                h.createQuery("SELECT chunk_index, last_error FROM exec_chunks WHERE run_id = :r AND shard = ANY(:s)"
                                + " AND state = 'failed' ORDER BY chunk_index LIMIT " + NAMED_FAILURES)
                        .bind("r", runId)
                        .bindArray("s", Integer.class, assigned)
                        .map((rs, ctx) -> new FailedChunk(rs.getLong(1), rs.getString(2)))
                        .forEach(failed::add);
                return null;
            });
            long after = -1;
            while (true) {
                long from = after;
                List<ChunkSeed> page = LocalTransactions.inTransaction(
                        local, what(runId, alias), h -> SeedTables.verificationPage(h, runId, assigned, from));
                if (page.isEmpty()) {
                    break;
                }
                for (ChunkSeed c : page) {
                    folds.computeIfAbsent(c.shard(), s -> new PublishedPlan.SettlementFold())
                            .add(c.chunkIndex(), c.chunkId(), c.caseCount(), c.membership());
                }
                after = page.get(page.size() - 1).chunkIndex();
            }
        }

        private RunSnapshot decodeSnapshot(String text, String sha, String alias) {
            try {
                RunSnapshot s = RunSnapshot.decode(text);
                if (!s.sha256().toHex().equals(sha) || !s.runId().equals(runId)) {
                    problems.add("the run snapshot in execution database \"" + alias + "\" does not match its hash");
                    return null;
                }
                return s;
            } catch (DamagedException e) {
                problems.add("execution database \"" + alias + "\": " + e.getMessage());
                return null;
            }
        }

        /** Compares every shard's rows, sums and fold with its snapshot and the published plan. */
        void check(List<RunRecords.Route> routes) {
            if (snapshot == null) {
                if (problems.isEmpty()) {
                    problems.add("no run snapshot could be read");
                }
                return;
            }
            int gates = snapshot.gates().size();
            if (routes.size() != published.size()) {
                problems.add(routes.size() + " shard routes for " + published.size() + " published shards");
            }
            for (RunRecords.Route route : routes) {
                int s = route.shard();
                PublishedShard p = published.get(s);
                ShardRow row = shards.get(s);
                ShardTallies.Tally t = tallies.get(s);
                PublishedPlan.SettlementFold f = folds.get(s);
                String at = "shard " + s + " in execution database \"" + route.placement() + "\"";
                if (p == null) {
                    problems.add("shard " + s + " has a route but is not a published shard of the plan");
                    continue;
                }
                if (row == null || t == null || f == null) {
                    problems.add(at + " has no " + (row == null ? "snapshot row" : "chunk rows"));
                    continue;
                }
                if (!"open".equals(row.state()) || row.epoch() != route.epoch()) {
                    problems.add(at + " is " + row.state() + " at route epoch " + row.epoch() + ", but its route is"
                            + " active at epoch " + route.epoch());
                }
                if (row.cases() != p.cases()
                        || row.chunks() != p.chunks()
                        || !row.settlement().equals(p.settlement())
                        || !java.util.Arrays.equals(row.gateCounts(), p.gateCounts())
                        || !p.gateNames()
                                .equals(snapshot.gates().stream()
                                        .map(RunSnapshot.Gate::name)
                                        .toList())) {
                    problems.add(at + ": the shard snapshot differs from the published plan's shard");
                }
                long chunks = f.chunks();
                long cases = f.cases();
                if (chunks != row.chunks()
                        || cases != row.cases()
                        || !f.finish().toHex().equals(row.settlement())) {
                    problems.add(at + " folds to " + chunks + " chunks / " + cases
                            + " cases with a different settlement hash than the plan's " + row.chunks() + " / "
                            + row.cases());
                }
                if (t.malformed() > 0) {
                    problems.add(at + " has " + t.malformed() + " done chunk rows with impossible tallies");
                }
                if (t.chunksOpen() > 0) {
                    problems.add(at + " still has queued or leased chunks");
                }
                for (int g = 0; g < gates && g < row.gateCounts().length; g++) {
                    if (t.passed()[g] + t.failed()[g] + t.errored()[g] > row.gateCounts()[g]) {
                        problems.add(at + ": gate " + snapshot.gates().get(g).name() + " has more outcomes than"
                                + " its " + row.gateCounts()[g] + " planned cases");
                    }
                }
                if (row.gateCounts().length != gates) {
                    problems.add(at + " has planned counts for " + row.gateCounts().length + " gates, not " + gates);
                }
                failedChunks += t.chunksFailed();
            }
            for (int g = 0; g < gates; g++) {
                long planned = planned(g);
                if (planned != snapshot.gates().get(g).plannedCases()) {
                    problems.add("gate " + snapshot.gates().get(g).name() + ": the shards plan " + planned
                            + " cases, the gate " + snapshot.gates().get(g).plannedCases());
                }
            }
        }

        private long planned(int g) {
            long n = 0;
            for (ShardRow row : shards.values()) {
                n += g < row.gateCounts().length ? row.gateCounts()[g] : 0;
            }
            return n;
        }

        List<GateResult> gateTable() {
            List<GateResult> out = new ArrayList<>();
            for (int g = 0; g < snapshot.gates().size(); g++) {
                long passed = 0;
                long failed = 0;
                long errored = 0;
                for (ShardTallies.Tally t : tallies.values()) {
                    passed += t.passed()[g];
                    failed += t.failed()[g];
                    errored += t.errored()[g];
                }
                RunSnapshot.Gate gate = snapshot.gates().get(g);
                out.add(GateResult.decided(gate.name(), planned(g), passed, failed, errored, gate.minPassRate()));
            }
            return out;
        }

        String failureReason() {
            failed.sort(java.util.Comparator.comparingLong(FailedChunk::chunkIndex));
            List<String> named = new ArrayList<>();
            for (FailedChunk c : failed.subList(0, Math.min(NAMED_FAILURES, failed.size()))) {
                named.add("chunk " + c.chunkIndex() + " (" + oneLine(c.error()) + ")");
            }
            long more = failedChunks - named.size();
            return "run " + runId + ": " + failedChunks + (failedChunks == 1 ? " chunk" : " chunks")
                    + " could not be executed: " + String.join(", ", named) + (more > 0 ? " and " + more + " more" : "")
                    + "; their cases never ran and count against every gate's pass rate, no verdict is given";
        }

        /** A shard snapshot's planned gate counts; unreadable ones are a problem (and an empty array). */
        private long[] localCounts(String text, String alias, int shard) {
            try {
                JsonNode a = MAPPER.readTree(text);
                long[] counts = new long[a.size()];
                for (int i = 0; i < a.size(); i++) {
                    if (!a.get(i).canConvertToLong()) {
                        throw new IOException("not a count: " + a.get(i));
                    }
                    counts[i] = a.get(i).asLong();
                }
                return counts;
            } catch (IOException | RuntimeException e) {
                problems.add("shard " + shard + " in execution database \"" + alias + "\" has unreadable planned"
                        + " gate counts");
                return new long[0];
            }
        }

        private JsonNode json(String text) {
            try {
                return MAPPER.readTree(text);
            } catch (IOException e) {
                throw new DamagedException("run " + runId + ": a shard's gate counts cannot be read (" + text + ")", e);
            }
        }
    }

    private static String oneLine(String error) {
        if (error == null) {
            return "no error recorded";
        }
        String s = error.replaceAll("\\s+", " ").trim();
        return s.length() > 200 ? s.substring(0, 200) + "..." : s;
    }
}
