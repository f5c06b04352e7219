package dev.vigilo.exec.settlement;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.vigilo.common.errors.DamagedException;
import dev.vigilo.common.json.StrictJson;
import dev.vigilo.exec.GateResult;
import dev.vigilo.exec.LocalTransactions;
import dev.vigilo.exec.Placements;
import dev.vigilo.exec.record.AgreementTallies;
import dev.vigilo.exec.record.ChunkSeed;
import dev.vigilo.exec.record.Receipt;
import dev.vigilo.exec.record.RunRecords;
import dev.vigilo.exec.record.RunSnapshot;
import dev.vigilo.exec.record.RunSnapshotParser;
import dev.vigilo.exec.record.SeedTables;
import dev.vigilo.exec.record.ShardTallies;
import dev.vigilo.exec.record.UsageTallies;
import dev.vigilo.plan.PublishedPlan;
import dev.vigilo.stats.KrippendorffAlpha;
import dev.vigilo.stats.PassAtK;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.UUID;
import org.jdbi.v3.core.Jdbi;

/**
 * What settlement reads of one run, and what in it contradicts the plan: the control database's published shard
 * rows, and per execution database (only the shards routed there now) the run snapshot, the shard snapshots, the
 * aggregate sums of the chunk rows and the chunk identities folded per shard. Filled by bounded local transactions
 * outside any control transaction; never reads the object store. Owned by one settling thread.
 */
final class SettlementEvidence {
    private static final ObjectMapper MAPPER = StrictJson.newMapper();

    /** A shard's frozen snapshot row in its execution database. */
    private record ShardRow(
            int shard, long cases, long chunks, String settlement, long[] gateCounts, String state, long epoch) {}

    /** The published shard row in the control database. */
    private record PublishedShard(
            int shard, long cases, long chunks, String settlement, List<String> gateNames, long[] gateCounts) {}

    /** A failed chunk and its last error. */
    private record FailedChunk(long chunkIndex, String error) {}

    private final Placements placements;
    private final UUID runId;
    private final Map<Integer, PublishedShard> published = new TreeMap<>();
    private final Map<Integer, ShardRow> shards = new TreeMap<>();
    private final Map<Integer, ShardTallies.Tally> tallies = new TreeMap<>();
    private Map<String, List<Receipt.ModelUsage>> usage = Map.of();
    private Map<String, Map<String, KrippendorffAlpha.Sums>> agreement = Map.of();
    private final Map<Integer, PublishedPlan.SettlementFold> folds = new TreeMap<>();
    private final List<FailedChunk> failed = new ArrayList<>();
    private final List<String> problems = new ArrayList<>();
    private RunSnapshot snapshot;
    private String snapshotSha;
    private long failedChunks;

    SettlementEvidence(Placements placements, UUID runId) {
        this.placements = placements;
        this.runId = runId;
    }

    /** What contradicts the plan, in the order found (empty when the records are consistent). */
    List<String> problems() {
        return problems;
    }

    /** Chunks that ended failed, over every shard (valid after {@link #check}). */
    long failedChunks() {
        return failedChunks;
    }

    /** Reads the control database's published shard rows. */
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
                                    counts.stream().mapToLong(Long::longValue).toArray()));
                }));
    }

    /** One placement: a snapshot of its shard rows and sums, then its chunk identities in ordered pages. */
    void readPlacement(String alias, List<Integer> assigned) {
        Jdbi local = placements.jdbi(alias);
        LocalTransactions.inSnapshot(local, Settlement.what(runId, alias), h -> {
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
                    ShardTallies.read(h, runId, assigned, snapshot.gates().size(), snapshot.epochs()));
            usage = UsageTallies.plus(usage, UsageTallies.read(h, runId, assigned));
            agreement = AgreementTallies.plus(agreement, AgreementTallies.read(h, runId, assigned));
            h.createQuery("SELECT chunk_index, last_error FROM exec_chunks WHERE run_id = :r AND shard = ANY(:s)"
                            + " AND state = 'failed' ORDER BY chunk_index LIMIT " + Settlement.NAMED_FAILURES)
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
                    local, Settlement.what(runId, alias), h -> SeedTables.verificationPage(h, runId, assigned, from));
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
            RunSnapshot s = RunSnapshotParser.fromJson(text);
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
                    problems.add(at + ": gate " + snapshot.gates().get(g).name() + " has more outcomes than" + " its "
                            + row.gateCounts()[g] + " planned cases");
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

    /** The decided gate table, in gate order (only meaningful when {@link #problems} is empty). */
    /** The run's usage per scope, summed over the placements read. */
    Map<String, List<Receipt.ModelUsage>> usage() {
        return usage;
    }

    /** The run's judge agreement sums per scope and panel, summed over the placements read. */
    Map<String, Map<String, KrippendorffAlpha.Sums>> agreement() {
        return agreement;
    }

    List<GateResult> gateTable() {
        List<GateResult> out = new ArrayList<>();
        for (int g = 0; g < snapshot.gates().size(); g++) {
            ShardTallies.GateSum sum = ShardTallies.sum(tallies.values(), g);
            RunSnapshot.Gate gate = snapshot.gates().get(g);
            GateResult decided = GateResult.decided(
                    gate.name(),
                    planned(g),
                    sum.passed(),
                    sum.failed(),
                    sum.errored(),
                    gate.minPassRate(),
                    gate.decide(),
                    gate.confidence());
            if (snapshot.epochs() > 1) {
                decided = decided.withPassAtK(
                        PassAtK.of(ShardTallies.epochPasses(tallies.values(), g, snapshot.epochs())));
            }
            out.add(decided);
        }
        return out;
    }

    /** The failure reason of a run with failed chunks: the first few named with their last errors. */
    String failureReason() {
        // Each placement contributed its first few; the run's first few are among them.
        failed.sort(java.util.Comparator.comparingLong(FailedChunk::chunkIndex));
        List<String> named = new ArrayList<>();
        for (FailedChunk c : failed.subList(0, Math.min(Settlement.NAMED_FAILURES, failed.size()))) {
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

    private static String oneLine(String error) {
        if (error == null) {
            return "no error recorded";
        }
        String s = error.replaceAll("\\s+", " ").trim();
        return s.length() > 200 ? s.substring(0, 200) + "..." : s;
    }
}
