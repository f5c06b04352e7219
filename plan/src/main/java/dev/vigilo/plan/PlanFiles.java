package dev.vigilo.plan;

import dev.vigilo.common.crash.CrashPoints;
import dev.vigilo.storage.ObjectKey;
import dev.vigilo.storage.ObjectRef;
import dev.vigilo.storage.Sha256;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Jdbi;

/**
 * A creator's registrations and acknowledgements of its run's plan files ({@code run_plan_objects}) and the chunk
 * cursor they advance ({@code run_plans.plan_chunk_cursor}). A file is registered (owned, with its length and hash)
 * before its PUT and acknowledged once verified in the store; the cursor counts the consecutive acknowledged chunks a
 * resume starts after. Every mutation runs in its own short transaction that first rechecks the creator's lease
 * ({@link LeaseAuthority#recheck}); no transaction spans storage I/O.
 */
final class PlanFiles {
    /** One plan file's registration. */
    record FileRow(ObjectRef ref, PlanFileKind kind, Long chunkIndex) {}

    /** An acknowledged chunk file's index and reference. */
    record AcknowledgedChunk(long chunkIndex, ObjectRef ref) {}

    private final Jdbi jdbi;
    private final LeaseAuthority lease;
    private final UUID runId;

    PlanFiles(Jdbi jdbi, LeaseAuthority lease) {
        this.jdbi = Objects.requireNonNull(jdbi, "jdbi");
        this.lease = Objects.requireNonNull(lease, "lease");
        this.runId = lease.runId();
    }

    UUID runId() {
        return runId;
    }

    /** Renews the creator's lease if {@code interval} passed since its last recheck ({@link LeaseAuthority}). */
    void renewIfDue(Duration interval) {
        lease.renewIfDue(interval);
    }

    /**
     * Records ownership of a group's files before any PUT. Existing rows must carry identical references.
     *
     * @return the keys already acknowledged (to be verified again, not uploaded again)
     */
    List<ObjectKey> register(List<FileRow> files) {
        return register(files, List.of(), Optional.empty());
    }

    /**
     * Acknowledges verified files of earlier groups and advances the chunk cursor (as {@link #acknowledge}), then
     * records ownership of the next group's files before any PUT (as {@link #register(List)}), in one transaction:
     * both happen or neither does.
     *
     * @return the keys of {@code files} already acknowledged (to be verified again, not uploaded again)
     * @throws dev.vigilo.common.errors.DamagedException when a replayed file's bytes differ from its registration
     */
    List<ObjectKey> register(List<FileRow> files, List<ObjectKey> acknowledge, Optional<ChunkCursor> cursor) {
        CrashPoints.boundary("plan.register");
        return jdbi.inTransaction(h -> {
            lease.recheck(h);
            if (!acknowledge.isEmpty()) {
                markAcknowledged(h, acknowledge, cursor);
            }
            // One statement for the whole group; it returns the keys it inserted, so the rows that existed before
            // (a replay) are the only ones read back.
            List<String> inserted = h.createQuery("INSERT INTO run_plan_objects (run_id, object_key, kind, chunk_index,"
                            + " length, sha256, registered_generation)"
                            + " SELECT :r, t.k, t.kind, t.c, t.l, t.s, :g"
                            + " FROM unnest(:keys, :kinds, :chunks, :lengths, :shas) AS t(k, kind, c, l, s)"
                            + " ON CONFLICT (run_id, object_key) DO NOTHING RETURNING object_key")
                    .bind("r", runId)
                    .bind("g", lease.generation().value())
                    .bindArray(
                            "keys",
                            String.class,
                            files.stream().map(f -> f.ref().key().value()).toList())
                    .bindArray(
                            "kinds",
                            String.class,
                            files.stream().map(f -> f.kind().spelling()).toList())
                    .bindArray(
                            "chunks",
                            Long.class,
                            files.stream().map(FileRow::chunkIndex).toList())
                    .bindArray(
                            "lengths",
                            Long.class,
                            files.stream().map(f -> f.ref().length()).toList())
                    .bindArray(
                            "shas",
                            String.class,
                            files.stream().map(f -> f.ref().sha256().toHex()).toList())
                    .mapTo(String.class)
                    .list();
            if (inserted.size() == files.size()) {
                return List.<ObjectKey>of();
            }
            Set<String> fresh = new HashSet<>(inserted);
            List<String> keys = files.stream()
                    .map(f -> f.ref().key().value())
                    .filter(k -> !fresh.contains(k))
                    .toList();
            List<Map<String, Object>> rows = h.createQuery("SELECT object_key, length, sha256, acknowledged"
                            + " FROM run_plan_objects WHERE run_id = :r AND object_key IN (<keys>)")
                    .bind("r", runId)
                    .bindList("keys", keys)
                    .mapToMap()
                    .list();
            Map<String, Map<String, Object>> byKey = new HashMap<>();
            rows.forEach(r -> byKey.put((String) r.get("object_key"), r));
            List<ObjectKey> acked = new ArrayList<>();
            for (FileRow f : files) {
                Map<String, Object> r = byKey.get(f.ref().key().value());
                if (r == null) {
                    continue; // inserted just now
                }
                if (((Number) r.get("length")).longValue() != f.ref().length()
                        || !f.ref().sha256().toHex().equals(r.get("sha256"))) {
                    throw PlanErrors.damaged(
                            runId,
                            "replaying plan file " + f.ref().key()
                                    + " produced different bytes (sha256 "
                                    + f.ref().sha256().toHex() + ", recorded "
                                    + r.get("sha256") + "); the inputs changed under the run, create a new run");
                }
                if (Boolean.TRUE.equals(r.get("acknowledged"))) {
                    acked.add(f.ref().key());
                }
            }
            return acked;
        });
    }

    /** Acknowledges verified files and advances the chunk cursor (never backwards). */
    void acknowledge(List<ObjectKey> keys, Optional<ChunkCursor> cursor) {
        if (keys.isEmpty()) {
            return;
        }
        CrashPoints.boundary("plan.acknowledge");
        jdbi.useTransaction(h -> {
            lease.recheck(h);
            markAcknowledged(h, keys, cursor);
        });
    }

    private void markAcknowledged(Handle h, List<ObjectKey> keys, Optional<ChunkCursor> cursor) {
        // One statement: the files' flags and, when it moves, the cursor (never backwards).
        h.createUpdate("WITH acked AS (UPDATE run_plan_objects SET acknowledged = true"
                        + " WHERE run_id = :r AND object_key = ANY(:keys) RETURNING 1)"
                        + " UPDATE run_plans SET plan_chunk_cursor = GREATEST(plan_chunk_cursor, :c)"
                        + " WHERE run_id = :r AND :c >= 0")
                .bind("r", runId)
                .bindArray(
                        "keys",
                        String.class,
                        keys.stream().map(ObjectKey::value).toList())
                .bind("c", cursor.map(ChunkCursor::value).orElse(-1L))
                .execute();
    }

    /**
     * Reads the references of acknowledged chunk files with indexes in {@code [from, to)}, in chunk order, at most
     * {@code limit} of them (a page). Read-only: no authority check.
     */
    List<AcknowledgedChunk> acknowledgedChunks(long from, long to, int limit) {
        return jdbi.withHandle(h -> h.createQuery("SELECT chunk_index, object_key, length, sha256 FROM run_plan_objects"
                        + " WHERE run_id = :r AND kind = :kind AND acknowledged AND chunk_index >= :from"
                        + " AND chunk_index < :to ORDER BY chunk_index LIMIT :limit")
                .bind("r", runId)
                .bind("kind", PlanFileKind.CHUNK.spelling())
                .bind("from", from)
                .bind("to", to)
                .bind("limit", limit)
                .map((rs, ctx) -> new AcknowledgedChunk(
                        rs.getLong("chunk_index"),
                        new ObjectRef(
                                ObjectKey.of(rs.getString("object_key")),
                                rs.getLong("length"),
                                Sha256.parseHex(rs.getString("sha256")))))
                .list());
    }
}
