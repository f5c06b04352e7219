package dev.vigilo.plan;

import dev.vigilo.common.crash.CrashPoints;
import dev.vigilo.common.errors.DatabaseErrors;
import dev.vigilo.common.errors.FencedException;
import dev.vigilo.storage.ObjectKey;
import dev.vigilo.storage.ObjectRef;
import dev.vigilo.storage.Sha256;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Jdbi;

/**
 * One creator's authority over one run's preparation records: the five-minute creation lease plus the plan
 * generation of its claim. Every mutation runs in its own short transaction that locks the run row and rechecks
 * owner, generation, status and expiry (database clock) before changing anything; no transaction spans storage I/O.
 * Not thread-safe: one creator thread owns an instance.
 */
final class Authority {
    /** Inputs frozen at the run's first claim; a repeat must present identical values. */
    record Frozen(
            UUID datasetUploadId,
            String sourceSha256,
            UUID membershipUuid,
            long caseCount,
            String storageBinding,
            String profileSha256,
            String limits,
            String evaluatorArtifacts,
            String initialPlacement,
            long expectedChunks) {}

    /** What the claim found. */
    record Claimed(
            PlanStatus planStatus,
            ChunkCursor cursor,
            Optional<ObjectRef> root,
            boolean executionRequested,
            Optional<String> rejection,
            RunState runStatus) {}

    /** One plan file's registration. */
    record FileRow(ObjectRef ref, PlanFileKind kind, Long chunkIndex) {}

    private final Jdbi jdbi;
    private final UUID runId;
    private final UUID owner = UUID.randomUUID();
    private final LeaseHolder holder = LeaseHolder.current();
    private final Duration lease;
    private PlanGeneration generation;
    /** Written by every recheck; the creator thread and the group writer's coordinator both run transactions. */
    private volatile long lastRenewNanos;

    Authority(Jdbi jdbi, UUID runId, Duration lease) {
        this.jdbi = Objects.requireNonNull(jdbi, "jdbi");
        this.runId = Objects.requireNonNull(runId, "runId");
        this.lease = Objects.requireNonNull(lease, "lease");
    }

    UUID runId() {
        return runId;
    }

    PlanGeneration generation() {
        return generation;
    }

    /**
     * Claims the run: creates it (status creating, plan_status preparing) or takes over an expired or released lease,
     * or the live lease of a holder of this host that no longer runs ({@link LeaseHolder}), incrementing the plan
     * generation and recording this process as the holder. Rejects a live lease of another creator and any frozen
     * input that differs.
     */
    Claimed claim(Frozen f) {
        CrashPoints.boundary("plan.claim");
        Claimed c = jdbi.inTransaction(h -> {
            // Insert-or-lock: a concurrent first claim blocks on the insert until the other commits, then sees its row.
            int inserted = holder.bind(h.createUpdate("INSERT INTO runs (run_id, status, creation_owner,"
                            + " creation_lease_expires_at, creation_holder_owner, creation_holder_host,"
                            + " creation_holder_pid, creation_holder_start_ms) VALUES (:r, :status, :o,"
                            + " clock_timestamp() + make_interval(secs => :s), :o, :holder_host, :holder_pid,"
                            + " :holder_start_ms) ON CONFLICT (run_id) DO NOTHING"))
                    .bind("r", runId)
                    .bind("status", RunState.CREATING.spelling())
                    .bind("o", owner)
                    .bind("s", seconds())
                    .execute();
            if (inserted == 1) {
                h.createUpdate("INSERT INTO run_plans (run_id, dataset_upload_id, dataset_source_sha256,"
                                + " dataset_membership_uuid, dataset_case_count, storage_binding, profile_sha256, limits,"
                                + " evaluator_artifacts, initial_placement, plan_format_version, plan_generation,"
                                + " plan_status, expected_chunks) VALUES (:r, :d, :src, :m, :n, :b, :p, :l, :e, :ip, :v,"
                                + " 1, :ps, :x)")
                        .bind("r", runId)
                        .bind("d", f.datasetUploadId())
                        .bind("src", f.sourceSha256())
                        .bind("m", f.membershipUuid())
                        .bind("n", f.caseCount())
                        .bind("b", f.storageBinding())
                        .bind("p", f.profileSha256())
                        .bind("l", f.limits())
                        .bind("e", f.evaluatorArtifacts())
                        .bind("ip", f.initialPlacement())
                        .bind("v", PlanLayout.FORMAT_VERSION)
                        .bind("ps", PlanStatus.PREPARING.spelling())
                        .bind("x", f.expectedChunks())
                        .execute();
                generation = new PlanGeneration(1);
                return new Claimed(
                        PlanStatus.PREPARING,
                        new ChunkCursor(0),
                        Optional.empty(),
                        false,
                        Optional.empty(),
                        RunState.CREATING);
            }
            Optional<Map<String, Object>> run = h.createQuery("SELECT status, " + CreationLease.COLUMNS + ", "
                            + LeaseHolder.COLUMNS + " FROM runs WHERE run_id = :r FOR UPDATE")
                    .bind("r", runId)
                    .mapToMap()
                    .findOne();
            Map<String, Object> p = h.createQuery("SELECT * FROM run_plans WHERE run_id = :r")
                    .bind("r", runId)
                    .mapToMap()
                    .one();
            compare(f, p);
            RunState status = RunState.fromSpelling((String) run.get().get("status"));
            if (status == RunState.CANCELLED) {
                throw PlanErrors.fenced(runId, "the run was cancelled; create a new run");
            }
            Optional<CreationLease> held = CreationLease.held(run.get());
            if (held.isPresent()) {
                // A holder of this host that no longer runs (kill -9, a crash) is not waited for: its lease is taken
                // over now, and the generation below fences it should it run after all.
                Optional<LeaseHolder> recorded = LeaseHolder.recorded(run.get());
                if (recorded.map(LeaseHolder::state).orElse(null) != LeaseHolder.State.DEAD_HERE) {
                    throw PlanErrors.conflict(runId, held.get().refusal("creator", recorded));
                }
            }
            long gen = ((Number) p.get("plan_generation")).longValue() + 1;
            holder.bind(h.createUpdate("UPDATE runs SET creation_owner = :o, creation_lease_expires_at ="
                            + " clock_timestamp() + make_interval(secs => :s), " + LeaseHolder.ASSIGNMENTS
                            + ", updated_at = now() WHERE run_id = :r"))
                    .bind("o", owner)
                    .bind("s", seconds())
                    .bind("r", runId)
                    .execute();
            h.createUpdate("UPDATE run_plans SET plan_generation = :g WHERE run_id = :r")
                    .bind("g", gen)
                    .bind("r", runId)
                    .execute();
            generation = new PlanGeneration(gen);
            Optional<ObjectRef> root = p.get("root_key") == null
                    ? Optional.empty()
                    : Optional.of(new ObjectRef(
                            ObjectKey.of((String) p.get("root_key")),
                            ((Number) p.get("root_length")).longValue(),
                            Sha256.parseHex((String) p.get("root_sha256"))));
            return new Claimed(
                    PlanStatus.fromSpelling((String) p.get("plan_status")),
                    new ChunkCursor(((Number) p.get("plan_chunk_cursor")).longValue()),
                    root,
                    Boolean.TRUE.equals(p.get("execution_requested")),
                    Optional.ofNullable((String) p.get("rejection")),
                    status);
        });
        lastRenewNanos = System.nanoTime();
        return c;
    }

    private void compare(Frozen f, Map<String, Object> p) {
        List<String> problems = new ArrayList<>();
        diff(
                problems,
                "dataset upload id",
                p.get("dataset_upload_id").toString(),
                f.datasetUploadId().toString(),
                "pass the same --dataset-upload-id");
        diff(
                problems,
                "dataset source hash",
                (String) p.get("dataset_source_sha256"),
                f.sourceSha256(),
                "the dataset changed; create a new run");
        diff(
                problems,
                "dataset membership",
                p.get("dataset_membership_uuid").toString(),
                f.membershipUuid().toString(),
                "the dataset changed; create a new run");
        diff(
                problems,
                "dataset case count",
                p.get("dataset_case_count").toString(),
                Long.toString(f.caseCount()),
                "the dataset changed; create a new run");
        diff(
                problems,
                "storage binding",
                (String) p.get("storage_binding"),
                f.storageBinding(),
                "use a storage configuration that resolves the run's original store");
        diff(
                problems,
                "profile",
                (String) p.get("profile_sha256"),
                f.profileSha256(),
                "pass the same profile (or create a new run)");
        diff(problems, "limits", (String) p.get("limits"), f.limits(), "pass the same limits (or create a new run)");
        diff(
                problems,
                "evaluator artifacts",
                (String) p.get("evaluator_artifacts"),
                f.evaluatorArtifacts(),
                "pass the same profile (or create a new run)");
        if (!problems.isEmpty()) {
            throw PlanErrors.invalid(runId, problems);
        }
    }

    private static void diff(List<String> problems, String what, String recorded, String given, String todo) {
        if (!recorded.equals(given)) {
            problems.add(what + " differs from the run's (recorded " + recorded + ", given " + given + "); " + todo);
        }
    }

    private double seconds() {
        return lease.toMillis() / 1000.0;
    }

    /**
     * Locks the run row and rechecks this creator's authority, extending the lease: the gate of every mutation.
     *
     * @throws FencedException when the lease expired, was taken over, or the run left creating
     */
    void recheck(Handle h) {
        Optional<Map<String, Object>> row = h.createQuery("SELECT r.status, r.creation_owner,"
                        + " r.creation_lease_expires_at > clock_timestamp() AS live, p.plan_generation, p.plan_status"
                        + " FROM runs r JOIN run_plans p USING (run_id) WHERE r.run_id = :r FOR UPDATE OF r")
                .bind("r", runId)
                .mapToMap()
                .findOne();
        if (row.isEmpty()) {
            throw PlanErrors.fenced(runId, "the run disappeared");
        }
        Map<String, Object> m = row.get();
        if (!owner.equals(m.get("creation_owner"))
                || ((Number) m.get("plan_generation")).longValue() != generation.value()) {
            throw PlanErrors.fenced(
                    runId,
                    "another creator claimed the run (plan generation " + m.get("plan_generation") + ", ours "
                            + generation.value() + "); this creator stopped");
        }
        if (!Boolean.TRUE.equals(m.get("live"))) {
            throw PlanErrors.fenced(
                    runId,
                    "the creation lease expired before this creator renewed it;" + " repeat the command to resume");
        }
        RunState status = RunState.fromSpelling((String) m.get("status"));
        if (status != RunState.CREATING) {
            throw PlanErrors.fenced(runId, "the run is " + status + ", no longer " + RunState.CREATING);
        }
        h.createUpdate("UPDATE runs SET creation_lease_expires_at = clock_timestamp() + make_interval(secs => :s)"
                        + " WHERE run_id = :r")
                .bind("s", seconds())
                .bind("r", runId)
                .execute();
        lastRenewNanos = System.nanoTime();
    }

    /** Renews the lease if {@code interval} has passed since the last recheck; at most one SQL write per interval. */
    void renewIfDue(Duration interval) {
        if (System.nanoTime() - lastRenewNanos >= interval.toNanos()) {
            jdbi.useTransaction(this::recheck);
        }
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
     */
    List<ObjectKey> register(List<FileRow> files, List<ObjectKey> acknowledge, Optional<ChunkCursor> cursor) {
        CrashPoints.boundary("plan.register");
        return jdbi.inTransaction(h -> {
            recheck(h);
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
                    .bind("g", generation.value())
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
            java.util.Set<String> fresh = new java.util.HashSet<>(inserted);
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
            Map<String, Map<String, Object>> byKey = new java.util.HashMap<>();
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
            recheck(h);
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

    /** An acknowledged chunk file's index and reference. */
    record AcknowledgedChunk(long chunkIndex, ObjectRef ref) {}

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

    /** Counts registered files, and acknowledged ones, of this run. */
    long[] objectCounts() {
        return jdbi.withHandle(h -> {
            Map<String, Object> m = h.createQuery("SELECT count(*) AS n, count(*) FILTER (WHERE acknowledged) AS a"
                            + " FROM run_plan_objects WHERE run_id = :r")
                    .bind("r", runId)
                    .mapToMap()
                    .one();
            return new long[] {((Number) m.get("n")).longValue(), ((Number) m.get("a")).longValue()};
        });
    }

    /**
     * The commit point: in one transaction, rechecks authority, checks complete coverage (cursor at the expected
     * chunk count, every registered file acknowledged, the file count the verifier walked), records the verified
     * root and the shard rows, and moves the plan to ready (and the run to pending when execution is requested).
     */
    void publish(ObjectRef root, long expectedChunks, long filesWalked, List<ShardTotals> shards, boolean execute) {
        try {
            CrashPoints.boundary("plan.publish");
            publishTransaction(root, expectedChunks, filesWalked, shards, execute);
            CrashPoints.boundary("plan.publish.done");
        } catch (org.jdbi.v3.core.transaction.TransactionException e) {
            throw PlanErrors.stateUnknown(
                    runId,
                    "the publication commit failed (" + e.getMessage()
                            + "); its outcome is unknown: repeat the command with the same run id",
                    e);
        } catch (org.jdbi.v3.core.JdbiException e) {
            if (DatabaseErrors.isUnavailable(e)) {
                throw PlanErrors.stateUnknown(
                        runId,
                        "the control database connection failed during"
                                + " publication; its outcome is unknown: repeat the command with the same run id",
                        e);
            }
            throw e;
        }
    }

    private void publishTransaction(
            ObjectRef root, long expectedChunks, long filesWalked, List<ShardTotals> shards, boolean execute) {
        jdbi.useTransaction(h -> {
            recheck(h);
            Map<String, Object> m = h.createQuery("SELECT p.plan_chunk_cursor, p.plan_status,"
                            + " (SELECT count(*) FROM run_plan_objects o WHERE o.run_id = p.run_id) AS n,"
                            + " (SELECT count(*) FROM run_plan_objects o WHERE o.run_id = p.run_id AND NOT o.acknowledged) AS u"
                            + " FROM run_plans p WHERE p.run_id = :r")
                    .bind("r", runId)
                    .mapToMap()
                    .one();
            long cursor = ((Number) m.get("plan_chunk_cursor")).longValue();
            if (cursor != expectedChunks
                    || ((Number) m.get("u")).longValue() != 0
                    || ((Number) m.get("n")).longValue() != filesWalked) {
                throw PlanErrors.damaged(
                        runId,
                        "incomplete coverage: chunk cursor " + cursor + " of "
                                + expectedChunks + ", " + m.get("u") + " unacknowledged files, " + m.get("n")
                                + " registered vs " + filesWalked + " reachable from the root; repeat the command");
            }
            PlanStatus planStatus = PlanStatus.fromSpelling((String) m.get("plan_status"));
            if (planStatus != PlanStatus.PREPARING) {
                throw PlanErrors.fenced(runId, "plan is already " + planStatus);
            }
            ShardRows.insert(h, runId, shards, frozenPlacement(h));
            h.createUpdate("UPDATE run_plans SET plan_status = :ready, root_key = :k, root_length = :l,"
                            + " root_sha256 = :s, published_at = now(), execution_requested = :e WHERE run_id = :r")
                    .bind("ready", PlanStatus.READY.spelling())
                    .bind("k", root.key().value())
                    .bind("l", root.length())
                    .bind("s", root.sha256().toHex())
                    .bind("e", execute)
                    .bind("r", runId)
                    .execute();
        });
    }

    private String frozenPlacement(Handle h) {
        return h.createQuery("SELECT initial_placement FROM run_plans WHERE run_id = :r")
                .bind("r", runId)
                .mapTo(String.class)
                .one();
    }

    /**
     * Requests execution of an already published plan held by --prepare-only. The run stays creating: admission
     * (module exec) moves it to pending once its execution records are seeded and verified.
     */
    void requestExecution() {
        CrashPoints.boundary("plan.request-execution");
        jdbi.useTransaction(h -> {
            recheck(h);
            h.createUpdate("UPDATE run_plans SET execution_requested = true WHERE run_id = :r")
                    .bind("r", runId)
                    .execute();
        });
    }

    /** Records that the plan can never be prepared with these inputs (e.g. a gate selecting no case). */
    void reject(String reason) {
        CrashPoints.boundary("plan.reject");
        jdbi.useTransaction(h -> {
            recheck(h);
            h.createUpdate("UPDATE run_plans SET plan_status = :rejected, rejection = :x WHERE run_id = :r")
                    .bind("rejected", PlanStatus.REJECTED.spelling())
                    .bind("x", reason)
                    .bind("r", runId)
                    .execute();
        });
    }

    /** Yields ownership if this creator still holds it; best effort (the lease expires anyway). */
    void release() {
        if (generation == null) {
            return;
        }
        CrashPoints.boundary("plan.release");
        jdbi.useHandle(h -> h.createUpdate("UPDATE runs SET creation_owner = NULL, creation_lease_expires_at = NULL, "
                        + LeaseHolder.CLEARED + " WHERE run_id = :r AND creation_owner = :o")
                .bind("r", runId)
                .bind("o", owner)
                .execute());
    }
}
