package dev.vigilo.exec.record;

import dev.vigilo.storage.ObjectKey;
import dev.vigilo.storage.ObjectRef;
import dev.vigilo.storage.Sha256;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.jdbi.v3.core.Handle;

/**
 * Admission's SQL on an execution database: seeding the run snapshot, the shard snapshots and the chunk rows, each
 * insert followed by a comparison of what already existed (an admission replay must find identical rows), and the
 * ordered reads of verification. Every method runs inside the caller's (bounded) transaction.
 *
 * <p>Statement budgets (spec): shard snapshots in sets of at most {@value #SHARD_SET} shards with the common
 * snapshot sent once per set; chunk rows at most {@value #CHUNK_ROWS} rows and {@value #CHUNK_BYTES} bytes of
 * metadata per statement; verification pages of at most {@value #VERIFY_PAGE} ordered chunks.
 */
public final class SeedTables {
    static final int SHARD_SET = 64;
    static final int CHUNK_ROWS = 256;
    static final int CHUNK_BYTES = 256 * 1024;
    static final int VERIFY_PAGE = 256;
    /** Target size of one statement's snapshot metadata; a single larger snapshot goes alone. */
    static final int SNAPSHOT_BYTES = 8 * 1024 * 1024;

    private SeedTables() {}

    /** Per-shard snapshot: the manifest's totals and hashes and the planned count of every gate. */
    public record ShardSnapshot(
            int shard, long cases, long chunks, Sha256 projection, Sha256 settlement, List<Long> gateCounts) {
        public ShardSnapshot {
            gateCounts = List.copyOf(gateCounts);
        }

        String gateCountsJson() {
            StringBuilder b = new StringBuilder("[");
            for (int i = 0; i < gateCounts.size(); i++) {
                b.append(i == 0 ? "" : ",").append(gateCounts.get(i));
            }
            return b.append(']').toString();
        }
    }

    /**
     * Inserts the run snapshot and the shard snapshots missing from this database, then compares what exists.
     *
     * @return the differences found (empty when everything matches)
     */
    public static List<String> seedSnapshots(Handle h, RunSnapshot run, List<ShardSnapshot> shards) {
        String text = run.text();
        String sha = run.sha256().toHex();
        List<String> conflicts = new ArrayList<>();
        for (int from = 0; from < shards.size(); ) {
            int to = Math.min(shards.size(), from + SHARD_SET);
            // The common snapshot appears once per statement; SQL pairs it with each shard's frozen values.
            List<ShardSnapshot> set = shards.subList(from, to);
            h.createUpdate("WITH run AS (INSERT INTO exec_runs (run_id, snapshot_sha256, snapshot)"
                            + " VALUES (:r, :sha, :snap) ON CONFLICT (run_id) DO NOTHING)"
                            + " INSERT INTO exec_run_shards (run_id, shard, cases, chunks, projection_sha256,"
                            + " settlement_sha256, gate_counts)"
                            + " SELECT :r, s.shard, s.cases, s.chunks, s.proj, s.settle, s.gates FROM unnest("
                            + ":shard::int[], :cases::bigint[], :chunks::bigint[], :proj::text[], :settle::text[],"
                            + " :gates::text[]) AS s(shard, cases, chunks, proj, settle, gates)"
                            + " ON CONFLICT (run_id, shard) DO NOTHING")
                    .bind("r", run.runId())
                    .bind("sha", sha)
                    .bind("snap", text)
                    .bindArray(
                            "shard",
                            Integer.class,
                            set.stream().map(ShardSnapshot::shard).toList())
                    .bindArray(
                            "cases",
                            Long.class,
                            set.stream().map(ShardSnapshot::cases).toList())
                    .bindArray(
                            "chunks",
                            Long.class,
                            set.stream().map(ShardSnapshot::chunks).toList())
                    .bindArray(
                            "proj",
                            String.class,
                            set.stream().map(s -> s.projection().toHex()).toList())
                    .bindArray(
                            "settle",
                            String.class,
                            set.stream().map(s -> s.settlement().toHex()).toList())
                    .bindArray(
                            "gates",
                            String.class,
                            set.stream().map(ShardSnapshot::gateCountsJson).toList())
                    .execute();
            from = to;
        }
        Optional<String> existing = h.createQuery("SELECT snapshot_sha256 FROM exec_runs WHERE run_id = :r")
                .bind("r", run.runId())
                .mapTo(String.class)
                .findOne();
        if (existing.isPresent() && !existing.get().equals(sha)) {
            conflicts.add("the run snapshot differs (recorded sha256 " + existing.get() + ", admitted " + sha + ")");
        }
        Map<Integer, Map<String, Object>> rows = new HashMap<>();
        h.createQuery("SELECT shard, cases, chunks, projection_sha256, settlement_sha256, gate_counts"
                        + " FROM exec_run_shards WHERE run_id = :r AND shard = ANY(:s)")
                .bind("r", run.runId())
                .bindArray(
                        "s",
                        Integer.class,
                        shards.stream().map(ShardSnapshot::shard).toList())
                .mapToMap()
                .forEach(m -> rows.put(((Number) m.get("shard")).intValue(), m));
        for (ShardSnapshot s : shards) {
            Map<String, Object> m = rows.get(s.shard());
            if (m == null
                    || ((Number) m.get("cases")).longValue() != s.cases()
                    || ((Number) m.get("chunks")).longValue() != s.chunks()
                    || !s.projection().toHex().equals(m.get("projection_sha256"))
                    || !s.settlement().toHex().equals(m.get("settlement_sha256"))
                    || !s.gateCountsJson().equals(m.get("gate_counts"))) {
                conflicts.add("shard " + s.shard() + "'s snapshot differs from the published plan's");
            }
        }
        return conflicts;
    }

    /**
     * Inserts the chunk rows missing from this database (statements within the row and byte budgets), then compares
     * every given chunk with the row that exists.
     *
     * @return the differences found (empty when every row matches)
     */
    public static List<String> seedChunks(Handle h, UUID runId, List<ChunkSeed> chunks) {
        List<ChunkSeed> batch = new ArrayList<>();
        int bytes = 0;
        for (ChunkSeed c : chunks) {
            if (!batch.isEmpty() && (batch.size() == CHUNK_ROWS || bytes + c.metadataBytes() > CHUNK_BYTES)) {
                insert(h, runId, batch);
                batch.clear();
                bytes = 0;
            }
            batch.add(c);
            bytes += c.metadataBytes();
        }
        if (!batch.isEmpty()) {
            insert(h, runId, batch);
        }
        Map<Long, ChunkSeed> found = new HashMap<>();
        readSeeds(h, runId, chunks.stream().map(ChunkSeed::chunkIndex).toList())
                .forEach(s -> found.put(s.chunkIndex(), s));
        List<String> conflicts = new ArrayList<>();
        for (ChunkSeed c : chunks) {
            ChunkSeed row = found.get(c.chunkIndex());
            if (!c.equals(row)) {
                conflicts.add("chunk " + c.chunkIndex() + "'s scheduling row differs from the published plan's");
            }
        }
        return conflicts;
    }

    private static void insert(Handle h, UUID runId, List<ChunkSeed> batch) {
        h.createUpdate("INSERT INTO exec_chunks (run_id, chunk_index, shard, shard_seq, chunk_id, first_ordinal,"
                        + " case_count, membership_sha256, chunk_key, chunk_length, chunk_sha256)"
                        + " SELECT :r, c.* FROM unnest(:idx::bigint[], :shard::int[], :seq::bigint[], :id::uuid[],"
                        + " :first::bigint[], :n::int[], :m::text[], :k::text[], :l::bigint[], :s::text[])"
                        + " AS c(idx, shard, seq, id, first, n, m, k, l, s)"
                        + " ON CONFLICT (run_id, chunk_index) DO NOTHING")
                .bind("r", runId)
                .bindArray(
                        "idx",
                        Long.class,
                        batch.stream().map(ChunkSeed::chunkIndex).toList())
                .bindArray(
                        "shard",
                        Integer.class,
                        batch.stream().map(ChunkSeed::shard).toList())
                .bindArray(
                        "seq",
                        Long.class,
                        batch.stream().map(ChunkSeed::shardSeq).toList())
                .bindArray(
                        "id", UUID.class, batch.stream().map(ChunkSeed::chunkId).toList())
                .bindArray(
                        "first",
                        Long.class,
                        batch.stream().map(ChunkSeed::firstOrdinal).toList())
                .bindArray(
                        "n",
                        Integer.class,
                        batch.stream().map(ChunkSeed::caseCount).toList())
                .bindArray(
                        "m",
                        String.class,
                        batch.stream().map(c -> c.membership().toHex()).toList())
                .bindArray(
                        "k",
                        String.class,
                        batch.stream().map(c -> c.file().key().value()).toList())
                .bindArray(
                        "l",
                        Long.class,
                        batch.stream().map(c -> c.file().length()).toList())
                .bindArray(
                        "s",
                        String.class,
                        batch.stream().map(c -> c.file().sha256().toHex()).toList())
                .execute();
    }

    static final String SEED_COLUMNS = "chunk_index, shard, shard_seq, chunk_id, first_ordinal, case_count,"
            + " membership_sha256, chunk_key, chunk_length, chunk_sha256";

    private static List<ChunkSeed> readSeeds(Handle h, UUID runId, List<Long> indexes) {
        return h.createQuery("SELECT " + SEED_COLUMNS + " FROM exec_chunks WHERE run_id = :r AND chunk_index = ANY(:i)")
                .bind("r", runId)
                .bindArray("i", Long.class, indexes)
                .map((rs, ctx) -> seed(rs))
                .list();
    }

    /**
     * One verification page: the next at most {@value #VERIFY_PAGE} chunk rows of {@code shards} after chunk
     * {@code afterChunk}, in chunk order.
     */
    public static List<ChunkSeed> verificationPage(Handle h, UUID runId, List<Integer> shards, long afterChunk) {
        return h.createQuery("SELECT " + SEED_COLUMNS + " FROM exec_chunks WHERE run_id = :r AND shard = ANY(:s)"
                        + " AND chunk_index > :after ORDER BY chunk_index LIMIT " + VERIFY_PAGE)
                .bind("r", runId)
                .bindArray("s", Integer.class, shards)
                .bind("after", afterChunk)
                .map((rs, ctx) -> seed(rs))
                .list();
    }

    static ChunkSeed seed(java.sql.ResultSet rs) throws java.sql.SQLException {
        return new ChunkSeed(
                rs.getLong("chunk_index"),
                rs.getInt("shard"),
                rs.getLong("shard_seq"),
                rs.getObject("chunk_id", UUID.class),
                rs.getLong("first_ordinal"),
                rs.getInt("case_count"),
                Sha256.parseHex(rs.getString("membership_sha256")),
                new ObjectRef(
                        ObjectKey.of(rs.getString("chunk_key")),
                        rs.getLong("chunk_length"),
                        Sha256.parseHex(rs.getString("chunk_sha256"))));
    }
}
