package dev.vigilo.exec.view;

import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.common.errors.NotFoundException;
import dev.vigilo.common.errors.UnavailableException;
import dev.vigilo.exec.LocalTransactions;
import dev.vigilo.exec.Placements;
import dev.vigilo.exec.record.RunRecords;
import dev.vigilo.plan.RunLifecycle;
import dev.vigilo.plan.RunState;
import dev.vigilo.storage.ObjectKey;
import dev.vigilo.storage.ObjectRef;
import dev.vigilo.storage.Sha256;
import java.math.BigDecimal;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import java.util.UUID;
import org.jdbi.v3.core.Jdbi;

/**
 * Read-only views over every run for dashboards and metrics: a keyset-paged run list with progress, a run's plan
 * identity, its throughput over time, and counts by status and chunk state. Bounded work: one control query per call
 * and one aggregate per execution database over the rows of the runs asked about; never a per-case row, never an
 * object read. Thread-safe.
 */
public final class RunCatalog {
    /** The largest page of {@link #list}. */
    public static final int MAX_LIMIT = 200;
    /** The most buckets {@link #throughput} returns. */
    public static final int MAX_BUCKETS = 500;

    private final Placements placements;
    private final Jdbi control;

    public RunCatalog(Placements placements) {
        this.placements = Objects.requireNonNull(placements, "placements");
        this.control = placements.control();
    }

    /**
     * Where a page of the run list starts: after the run created at {@code createdAt} with id {@code runId} (newest
     * first). Its text form ({@link #toString()}, {@link #parse}) goes into URLs.
     */
    public record Cursor(Instant createdAt, UUID runId) {
        public Cursor {
            Objects.requireNonNull(createdAt, "createdAt");
            Objects.requireNonNull(runId, "runId");
        }

        @Override
        public String toString() {
            long micros = createdAt.getEpochSecond() * 1_000_000L + createdAt.getNano() / 1_000;
            return micros + "_" + runId;
        }

        /** @throws InvalidInputException for anything {@link #toString()} does not produce */
        public static Cursor parse(String text) {
            int i = text.indexOf('_');
            try {
                if (i < 1 || text.length() - i - 1 != 36) {
                    throw new IllegalArgumentException();
                }
                long micros = Long.parseLong(text.substring(0, i));
                UUID id = UUID.fromString(text.substring(i + 1));
                if (!id.toString().equals(text.substring(i + 1))) {
                    throw new IllegalArgumentException();
                }
                return new Cursor(
                        Instant.ofEpochSecond(
                                Math.floorDiv(micros, 1_000_000L), Math.floorMod(micros, 1_000_000L) * 1_000),
                        id);
            } catch (RuntimeException e) {
                throw new InvalidInputException("run list cursor \"" + text + "\" is not one this server wrote;"
                        + " start from the first page");
            }
        }
    }

    /**
     * One run in the list.
     *
     * @param planStatus     preparing, ready or rejected
     * @param datasetName    the dataset's label
     * @param cases          cases of the published plan (0 before publication)
     * @param chunksDone     done chunks; -1 when an execution database of the run could not be reached
     * @param chunksFailed   failed chunks; -1 likewise
     * @param casesDone      cases of done chunks; -1 likewise
     * @param identity       the run's name and agent; empty for runs created before they were recorded
     * @param outcome        its first gate's recorded pass rate and its usage, once settled
     */
    public record RunSummary(
            UUID runId,
            String status,
            Optional<String> verdict,
            Instant createdAt,
            Optional<Instant> finishedAt,
            UUID datasetUploadId,
            String datasetName,
            String planStatus,
            long expectedChunks,
            long cases,
            long chunksDone,
            long chunksFailed,
            long casesDone,
            Optional<Identity> identity,
            Outcome outcome) {}

    /**
     * What a run is, for people: its profile's name, its agent's kind and model (an http agent's model, a command
     * agent's program) and its label ({@code run create --label}), as preparation recorded them.
     */
    public record Identity(String profileName, String agentKind, Optional<String> agentModel, Optional<String> label) {
        /** The run's name: {@code quiz · baseline} with a label, else the profile's name. */
        public String name() {
            return label.map(l -> profileName + " · " + l).orElse(profileName);
        }

        /** {@code http · gpt-x}, or the kind alone. */
        public String agent() {
            return agentModel.map(m -> agentKind + " · " + m).orElse(agentKind);
        }
    }

    /**
     * A settled run's figures as settlement recorded them (all empty before).
     *
     * @param firstGate     its first gate's name and pass rate (passed / planned)
     * @param tokens        the tokens of its model calls (input and output), when its receipts recorded usage
     * @param costUsd       their cost; empty also while a model has no price
     */
    public record Outcome(
            Optional<Map.Entry<String, Double>> firstGate,
            java.util.OptionalLong tokens,
            Optional<BigDecimal> costUsd) {
        public static final Outcome NONE =
                new Outcome(Optional.empty(), java.util.OptionalLong.empty(), Optional.empty());
    }

    /** A page of runs, newest first, and where the next starts (empty on the last page). */
    public record Page(List<RunSummary> runs, Optional<Cursor> next) {
        public Page {
            runs = List.copyOf(runs);
        }
    }

    /**
     * A run's plan identity: what it was prepared from and where its plan is.
     *
     * @param datasetSourceSha256 SHA-256 of the dataset's uploaded bytes
     * @param membershipUuid      the dataset's membership identity
     * @param profileSha256       SHA-256 of the profile the plan was prepared from
     * @param storageBinding      the store holding the plan, receipts and outputs
     * @param root                the published plan manifest (empty until publication)
     * @param initialPlacement    the frozen placement rule
     * @param failureReason       why the run failed, when it did
     * @param rejection           why preparation was rejected, when it was
     */
    public record PlanIdentity(
            UUID runId,
            String status,
            Optional<String> verdict,
            UUID datasetUploadId,
            String datasetName,
            String datasetSourceSha256,
            UUID membershipUuid,
            long datasetCaseCount,
            String profileSha256,
            String storageBinding,
            String planStatus,
            long expectedChunks,
            Optional<ObjectRef> root,
            String initialPlacement,
            Instant createdAt,
            Optional<Instant> publishedAt,
            Optional<Instant> finishedAt,
            Optional<String> failureReason,
            Optional<String> rejection,
            Optional<Identity> runIdentity) {}

    /** Cases completed in {@code [start, start + width)} (by their chunk's completion time). */
    public record ThroughputPoint(Instant start, Duration width, long cases) {}

    /**
     * Chunks of the runs still executing (pending or running), by state, summed over every execution database this
     * process reaches, and the workers holding live leases there.
     *
     * @param chunksByState    queued, leased, done, failed
     * @param casesDone        cases of their done chunks
     * @param casesPlanned     cases of all their chunks
     * @param workersLeasing   distinct workers holding an unexpired lease
     * @param unreachable      execution databases that could not be read (their aliases)
     * @param queuedByRun      each executing run's queued chunks (claimable now: pending work, what autoscaling
     *     follows), 0 for a run with none; a run whose databases are all unreachable counts 0
     */
    public record ActiveCounts(
            Map<String, Long> chunksByState,
            long casesDone,
            long casesPlanned,
            long workersLeasing,
            List<String> unreachable,
            Map<UUID, Long> queuedByRun) {
        public ActiveCounts {
            chunksByState = java.util.Collections.unmodifiableMap(new TreeMap<>(chunksByState));
            unreachable = List.copyOf(unreachable);
            queuedByRun = java.util.Collections.unmodifiableMap(new TreeMap<>(queuedByRun));
        }
    }

    private static final String SUMMARY_COLUMNS = "SELECT r.run_id, r.status, r.verdict, r.created_at,"
            + " r.finished_at, p.dataset_upload_id, d.name AS dataset_name, p.plan_status, p.expected_chunks,"
            + " p.profile_name, p.agent_kind, p.agent_model, p.run_label,"
            + " (SELECT coalesce(sum(s.cases), 0) FROM run_plan_shards s WHERE s.run_id = r.run_id) AS cases,"
            // The settled figures: the first gate's recorded counts, and the usage over every case (scope '*'),
            // whose cost is unknown when any model's is (a sum would drop the unknown ones).
            + " (SELECT g.name FROM run_gate_results g WHERE g.run_id = r.run_id AND g.gate_index = 0) AS gate_name,"
            + " (SELECT CASE WHEN g.planned > 0 THEN g.passed::float8 / g.planned END FROM run_gate_results g"
            + " WHERE g.run_id = r.run_id AND g.gate_index = 0) AS gate_rate,"
            + " (SELECT sum(u.input_tokens + u.output_tokens) FROM run_usage u WHERE u.run_id = r.run_id"
            + " AND u.scope = '*') AS tokens,"
            + " (SELECT CASE WHEN bool_and(u.cost_usd IS NOT NULL) THEN sum(u.cost_usd) END FROM run_usage u"
            + " WHERE u.run_id = r.run_id AND u.scope = '*') AS cost_usd"
            + " FROM runs r JOIN run_plans p USING (run_id) JOIN dataset_uploads d ON d.upload_id ="
            + " p.dataset_upload_id";

    /**
     * Which runs a list shows: all of them, or those in one state, of one dataset, or whose name contains a text.
     *
     * @param status  a run state's spelling ({@code settled}, ...)
     * @param dataset a dataset upload id
     * @param name    a text the run's name contains ({@link Identity#name}: its profile's name and label;
     *                case-insensitive)
     */
    public record Filter(Optional<RunState> status, Optional<UUID> dataset, Optional<String> name) {
        public static final Filter ALL = new Filter(Optional.empty(), Optional.empty(), Optional.empty());

        public Filter {
            Objects.requireNonNull(status, "status");
            Objects.requireNonNull(dataset, "dataset");
            name = name.map(String::strip).filter(n -> !n.isEmpty());
        }

        /** The SQL conditions of this filter, bound by {@link #bind}; built from constants only. */
        String where() {
            StringBuilder w = new StringBuilder();
            status.ifPresent(x -> w.append(" AND r.status = :fs"));
            dataset.ifPresent(x -> w.append(" AND p.dataset_upload_id = :fd"));
            // The name as a literal substring: LIKE's own characters escaped.
            // Matched against the name as shown (profile name, then " · " and the label when there is one).
            name.ifPresent(x -> w.append(" AND concat_ws(' · ', p.profile_name, p.run_label) ILIKE :fn ESCAPE '\\'"));
            return w.toString();
        }

        void bind(org.jdbi.v3.core.statement.Query q) {
            status.ifPresent(x -> q.bind("fs", x.spelling()));
            dataset.ifPresent(x -> q.bind("fd", x));
            name.ifPresent(x -> q.bind(
                    "fn", "%" + x.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"));
        }
    }

    /** As {@link #list(Filter, Optional, int)} over every run. */
    public Page list(Optional<Cursor> after, int limit) {
        return list(Filter.ALL, after, limit);
    }

    /**
     * A page of the runs {@code filter} selects, newest first, each with its progress.
     *
     * @param after where to start (the previous page's {@link Page#next()}); empty for the first page
     * @param limit 1..{@value #MAX_LIMIT}
     */
    public Page list(Filter filter, Optional<Cursor> after, int limit) {
        Objects.requireNonNull(filter, "filter");
        Objects.requireNonNull(after, "after");
        if (limit < 1 || limit > MAX_LIMIT) {
            throw new InvalidInputException("page size " + limit + " is out of range; use 1.." + MAX_LIMIT);
        }
        List<Map<String, Object>> rows = control.withHandle(h -> {
            var q = h.createQuery(SUMMARY_COLUMNS + " WHERE true"
                    + (after.isPresent() ? " AND (r.created_at, r.run_id) < (:at, :id)" : "")
                    + filter.where()
                    + " ORDER BY r.created_at DESC, r.run_id DESC LIMIT :n");
            filter.bind(q);
            return q.bind(
                            "at",
                            after.map(c -> OffsetDateTime.ofInstant(c.createdAt(), java.time.ZoneOffset.UTC))
                                    .orElse(null))
                    .bind("id", after.map(Cursor::runId).orElse(null))
                    .bind("n", limit + 1)
                    .mapToMap()
                    .list();
        });
        boolean more = rows.size() > limit;
        List<Map<String, Object>> page = more ? rows.subList(0, limit) : rows;
        List<UUID> ids = page.stream().map(m -> (UUID) m.get("run_id")).toList();
        Map<UUID, long[]> progress = progress(ids);
        List<RunSummary> out = new ArrayList<>();
        for (Map<String, Object> m : page) {
            UUID id = (UUID) m.get("run_id");
            long[] p = progress.getOrDefault(id, new long[3]);
            out.add(new RunSummary(
                    id,
                    (String) m.get("status"),
                    Optional.ofNullable((String) m.get("verdict")),
                    instant(m.get("created_at")),
                    Optional.ofNullable(m.get("finished_at")).map(RunCatalog::instant),
                    (UUID) m.get("dataset_upload_id"),
                    (String) m.get("dataset_name"),
                    (String) m.get("plan_status"),
                    ((Number) m.get("expected_chunks")).longValue(),
                    ((Number) m.get("cases")).longValue(),
                    p[0],
                    p[1],
                    p[2],
                    identityOf(m),
                    new Outcome(
                            Optional.ofNullable((String) m.get("gate_name"))
                                    .filter(g -> m.get("gate_rate") != null)
                                    .map(g -> Map.entry(g, ((Number) m.get("gate_rate")).doubleValue())),
                            m.get("tokens") == null
                                    ? java.util.OptionalLong.empty()
                                    : java.util.OptionalLong.of(((Number) m.get("tokens")).longValue()),
                            Optional.ofNullable((BigDecimal) m.get("cost_usd")))));
        }
        Optional<Cursor> next = more
                ? Optional.of(new Cursor(
                        out.get(out.size() - 1).createdAt(),
                        out.get(out.size() - 1).runId()))
                : Optional.empty();
        return new Page(out, next);
    }

    /**
     * Done chunks, failed chunks and done cases per run, summed over the execution databases holding its shards now
     * (a moved shard's frozen rows at its former placement are not counted); -1 for a run one of whose databases
     * cannot be reached.
     */
    private Map<UUID, long[]> progress(List<UUID> ids) {
        Map<UUID, long[]> out = new HashMap<>();
        if (ids.isEmpty()) {
            return out;
        }
        Map<String, List<UUID>> byAlias = new TreeMap<>();
        control.useHandle(h -> h.createQuery(
                        "SELECT DISTINCT placement, run_id FROM exec_shard_routes WHERE run_id = ANY(:ids)")
                .bindArray("ids", UUID.class, ids)
                .mapToMap()
                .forEach(m -> byAlias.computeIfAbsent((String) m.get("placement"), a -> new ArrayList<>())
                        .add((UUID) m.get("run_id"))));
        for (var e : byAlias.entrySet()) {
            try {
                LocalTransactions.inSnapshot(
                        placements.jdbi(e.getKey()),
                        "progress of runs in execution database \"" + e.getKey() + "\"",
                        h -> {
                            h.createQuery("SELECT c.run_id, count(*) FILTER (WHERE c.state = 'done') AS done,"
                                            + " count(*) FILTER (WHERE c.state = 'failed') AS failed,"
                                            + " coalesce(sum(c.case_count) FILTER (WHERE c.state = 'done'), 0)"
                                            + " AS cases_done FROM exec_chunks c JOIN exec_run_shards s USING"
                                            + " (run_id, shard) WHERE c.run_id = ANY(:ids) AND s.state <> 'moved'"
                                            + " GROUP BY c.run_id")
                                    .bindArray("ids", UUID.class, e.getValue())
                                    .mapToMap()
                                    .forEach(m -> {
                                        long[] p = out.computeIfAbsent((UUID) m.get("run_id"), k -> new long[3]);
                                        if (p[0] >= 0) {
                                            p[0] += ((Number) m.get("done")).longValue();
                                            p[1] += ((Number) m.get("failed")).longValue();
                                            p[2] += ((Number) m.get("cases_done")).longValue();
                                        }
                                    });
                            return null;
                        });
            } catch (UnavailableException ex) {
                for (UUID id : e.getValue()) {
                    out.put(id, new long[] {-1, -1, -1});
                }
            }
        }
        return out;
    }

    /**
     * A run to compare with: another run of the same dataset, as a picker lists it.
     *
     * @param identity its name and agent, when recorded
     */
    public record Peer(
            UUID runId, String status, Optional<String> verdict, Instant createdAt, Optional<Identity> identity) {}

    /**
     * The newest runs of dataset {@code datasetUploadId} other than {@code except}, newest first, at most {@code
     * limit}: the control database only (no progress), for the run page's compare picker.
     */
    public List<Peer> peers(UUID datasetUploadId, UUID except, int limit) {
        if (limit < 1 || limit > MAX_LIMIT) {
            throw new InvalidInputException("page size " + limit + " is out of range; use 1.." + MAX_LIMIT);
        }
        return control
                .withHandle(h -> h.createQuery("SELECT r.run_id, r.status, r.verdict, r.created_at,"
                                + " p.profile_name, p.agent_kind, p.agent_model, p.run_label FROM runs r JOIN run_plans p"
                                + " USING"
                                + " (run_id) WHERE p.dataset_upload_id = :d AND r.run_id <> :x"
                                + " ORDER BY r.created_at DESC, r.run_id DESC LIMIT :n")
                        .bind("d", datasetUploadId)
                        .bind("x", except)
                        .bind("n", limit)
                        .mapToMap()
                        .list())
                .stream()
                .map(m -> new Peer(
                        (UUID) m.get("run_id"),
                        (String) m.get("status"),
                        Optional.ofNullable((String) m.get("verdict")),
                        instant(m.get("created_at")),
                        identityOf(m)))
                .toList();
    }

    /** @throws NotFoundException no such run */
    public PlanIdentity identity(UUID runId) {
        Objects.requireNonNull(runId, "runId");
        Map<String, Object> m = control.withHandle(h -> h.createQuery("SELECT r.run_id, r.status, r.verdict,"
                                + " r.created_at, r.finished_at, r.failure_reason, p.dataset_upload_id, d.name AS"
                                + " dataset_name, p.dataset_source_sha256, p.dataset_membership_uuid,"
                                + " p.dataset_case_count, p.profile_sha256, p.storage_binding, p.plan_status,"
                                + " p.expected_chunks, p.root_key, p.root_length, p.root_sha256, p.initial_placement,"
                                + " p.published_at, p.rejection, p.profile_name, p.agent_kind, p.agent_model, p.run_label"
                                + " FROM runs r"
                                + " JOIN run_plans p USING (run_id) JOIN"
                                + " dataset_uploads d ON d.upload_id = p.dataset_upload_id WHERE r.run_id = :r")
                        .bind("r", runId)
                        .mapToMap()
                        .findOne())
                .orElseThrow(() -> RunRecords.notFound(runId));
        Optional<ObjectRef> root = Optional.ofNullable((String) m.get("root_key"))
                .map(k -> new ObjectRef(
                        ObjectKey.of(k), ((Number) m.get("root_length")).longValue(), Sha256.parseHex((String)
                                m.get("root_sha256"))));
        return new PlanIdentity(
                runId,
                (String) m.get("status"),
                Optional.ofNullable((String) m.get("verdict")),
                (UUID) m.get("dataset_upload_id"),
                (String) m.get("dataset_name"),
                (String) m.get("dataset_source_sha256"),
                (UUID) m.get("dataset_membership_uuid"),
                ((Number) m.get("dataset_case_count")).longValue(),
                (String) m.get("profile_sha256"),
                (String) m.get("storage_binding"),
                (String) m.get("plan_status"),
                ((Number) m.get("expected_chunks")).longValue(),
                root,
                (String) m.get("initial_placement"),
                instant(m.get("created_at")),
                Optional.ofNullable(m.get("published_at")).map(RunCatalog::instant),
                Optional.ofNullable(m.get("finished_at")).map(RunCatalog::instant),
                Optional.ofNullable((String) m.get("failure_reason")),
                Optional.ofNullable((String) m.get("rejection")),
                identityOf(m));
    }

    /** The identity columns of a {@code run_plans} row; empty for runs created before they were recorded. */
    private static Optional<Identity> identityOf(Map<String, Object> m) {
        return Optional.ofNullable((String) m.get("profile_name"))
                .map(n -> new Identity(
                        n,
                        (String) m.get("agent_kind"),
                        Optional.ofNullable((String) m.get("agent_model")),
                        Optional.ofNullable((String) m.get("run_label"))));
    }

    /**
     * Cases completed over time, in at most {@code buckets} equal buckets from the first to the last chunk
     * completion (each chunk's cases count at its completion). Empty before the first completion.
     *
     * @throws NotFoundException    no such run
     * @throws UnavailableException an execution database of the run cannot be reached
     */
    public List<ThroughputPoint> throughput(UUID runId, int buckets) {
        Objects.requireNonNull(runId, "runId");
        if (buckets < 1 || buckets > MAX_BUCKETS) {
            throw new InvalidInputException("bucket count " + buckets + " is out of range; use 1.." + MAX_BUCKETS);
        }
        control.useHandle(h -> RunRecords.run(h, runId));
        Map<String, List<Integer>> byAlias =
                RunRecords.byPlacement(control.withHandle(h -> RunRecords.routes(h, runId, "")));
        String where = " FROM exec_chunks c JOIN exec_run_shards s USING (run_id, shard) WHERE c.run_id = :r"
                + " AND c.shard = ANY(:s) AND c.state = 'done' AND s.state <> 'moved'";
        double lo = Double.MAX_VALUE;
        double hi = -Double.MAX_VALUE;
        for (var e : byAlias.entrySet()) {
            double[] range = LocalTransactions.inTransaction(
                    placements.jdbi(e.getKey()),
                    "throughput of run " + runId + " in execution database \"" + e.getKey() + "\"",
                    h -> h.createQuery("SELECT extract(epoch FROM min(c.finished_at))::float8 AS lo,"
                                    + " extract(epoch FROM max(c.finished_at))::float8 AS hi" + where)
                            .bind("r", runId)
                            .bindArray("s", Integer.class, e.getValue())
                            .map((rs, ctx) -> rs.getObject("lo") == null
                                    ? null
                                    : new double[] {rs.getDouble("lo"), rs.getDouble("hi")})
                            .one());
            if (range != null) {
                lo = Math.min(lo, range[0]);
                hi = Math.max(hi, range[1]);
            }
        }
        if (lo > hi) {
            return List.of();
        }
        // At least one second per bucket: finer buckets only make noise.
        int n = (int) Math.max(1, Math.min(buckets, Math.ceil(hi - lo)));
        double width = Math.max(1.0, (hi - lo) / n);
        long[] sums = new long[n];
        final double start = lo;
        for (var e : byAlias.entrySet()) {
            LocalTransactions.inTransaction(
                    placements.jdbi(e.getKey()),
                    "throughput of run " + runId + " in execution database \"" + e.getKey() + "\"",
                    h -> {
                        h.createQuery("SELECT least(floor((extract(epoch FROM c.finished_at) - :lo) / :w)::int, :last)"
                                        + " AS b, sum(c.case_count) AS cases" + where + " GROUP BY b")
                                .bind("r", runId)
                                .bindArray("s", Integer.class, e.getValue())
                                .bind("lo", start)
                                .bind("w", width)
                                .bind("last", n - 1)
                                .mapToMap()
                                .forEach(m -> sums[Math.max(0, ((Number) m.get("b")).intValue())] +=
                                        ((Number) m.get("cases")).longValue());
                        return null;
                    });
        }
        List<ThroughputPoint> out = new ArrayList<>(n);
        Duration w = Duration.ofNanos((long) (width * 1e9));
        for (int i = 0; i < n; i++) {
            double t = start + i * width;
            out.add(new ThroughputPoint(
                    Instant.ofEpochSecond((long) Math.floor(t), (long) ((t - Math.floor(t)) * 1e9)), w, sums[i]));
        }
        return out;
    }

    /** How long the live rate's exponential weights last: a completion counts e^-1 of its weight after this long. */
    public static final Duration RATE_TIME_CONSTANT = Duration.ofSeconds(60);

    /**
     * A worker that polls an execution database records itself there ({@code exec_lease_holders.refreshed_at}) at
     * every coordination interval (5 s by default); one not seen for this long is not counted as working.
     */
    public static final Duration WORKER_SEEN_WITHIN = Duration.ofSeconds(60);

    /**
     * What a running run's page needs beyond its counts (docs/web.md, "Live runs").
     *
     * @param casesPerSecond  the smoothed throughput now: each completed chunk's cases weighted by {@code exp(-age /
     *                        60 s)}, divided by 60 s and by the weight an unbroken rate would have had since the plan
     *                        was published ({@code 1 - exp(-elapsed / 60 s)}), so a steady rate reads as itself,
     *                        chunk spikes are spread over the minute, and a stalled run decays towards 0
     * @param leasingWorkers  distinct workers holding an unexpired lease on the run's chunks (their heartbeats renew
     *                        it)
     * @param seenWorkers     workers that recorded themselves as lease holders in one of the run's execution databases
     *                        within {@link #WORKER_SEEN_WITHIN} (a live worker looking for work there)
     * @param unreachable     execution databases of the run that could not be read (their aliases)
     */
    public record Live(double casesPerSecond, long leasingWorkers, long seenWorkers, List<String> unreachable) {
        public Live {
            unreachable = List.copyOf(unreachable);
        }

        /**
         * Whether no live worker is working on the run or looking for its work: no unexpired lease on its chunks and no
         * worker seen in its execution databases lately. Unknown (false) while one of them cannot be read.
         */
        public boolean noWorker() {
            return leasingWorkers == 0 && seenWorkers == 0 && unreachable.isEmpty();
        }
    }

    /**
     * The run's smoothed throughput and the workers on it now ({@link Live}). Bounded: one control query and per
     * execution database one snapshot of three aggregates (done chunks of the last 10 minutes, leased chunks, lease
     * holders).
     *
     * @throws NotFoundException no such run
     */
    public Live live(UUID runId) {
        Objects.requireNonNull(runId, "runId");
        Optional<Instant> published = control.withHandle(h -> {
            RunRecords.run(h, runId);
            return h.createQuery("SELECT published_at FROM run_plans WHERE run_id = :r")
                    .bind("r", runId)
                    .mapToMap()
                    .findOne()
                    .flatMap(m -> Optional.ofNullable(m.get("published_at")).map(RunCatalog::instant));
        });
        Map<String, List<Integer>> byAlias =
                RunRecords.byPlacement(control.withHandle(h -> RunRecords.routes(h, runId, "")));
        double tau = RATE_TIME_CONSTANT.toMillis() / 1000.0;
        double[] weighted = new double[1];
        long[] workers = new long[2];
        double[] dbNow = {Double.NaN};
        List<String> unreachable = new ArrayList<>();
        for (var e : byAlias.entrySet()) {
            try {
                LocalTransactions.inSnapshot(
                        placements.jdbi(e.getKey()),
                        "live view of run " + runId + " in execution database \"" + e.getKey() + "\"",
                        h -> {
                            weighted[0] += h.createQuery("SELECT coalesce(sum(c.case_count * exp(-extract(epoch FROM"
                                            + " now() - c.finished_at)::float8 / :tau)), 0)::float8 FROM exec_chunks c"
                                            + " JOIN exec_run_shards s USING (run_id, shard) WHERE c.run_id = :r AND"
                                            + " c.shard = ANY(:s) AND c.state = 'done' AND s.state <> 'moved' AND"
                                            + " c.finished_at > now() - interval '10 minutes'")
                                    .bind("r", runId)
                                    .bind("tau", tau)
                                    .bindArray("s", Integer.class, e.getValue())
                                    .mapTo(Double.class)
                                    .one();
                            workers[0] += h.createQuery("SELECT count(DISTINCT lease_owner) FROM exec_chunks WHERE"
                                            + " run_id = :r AND shard = ANY(:s) AND state = 'leased' AND"
                                            + " lease_expires_at > now()")
                                    .bind("r", runId)
                                    .bindArray("s", Integer.class, e.getValue())
                                    .mapTo(Long.class)
                                    .one();
                            workers[1] += h.createQuery("SELECT count(*) FROM exec_lease_holders WHERE refreshed_at >"
                                            + " now() - make_interval(secs => :within)")
                                    .bind("within", (double) WORKER_SEEN_WITHIN.toSeconds())
                                    .mapTo(Long.class)
                                    .one();
                            if (Double.isNaN(dbNow[0])) {
                                dbNow[0] = h.createQuery("SELECT extract(epoch FROM now())::float8")
                                        .mapTo(Double.class)
                                        .one();
                            }
                            return null;
                        });
            } catch (UnavailableException x) {
                unreachable.add(e.getKey());
            }
        }
        java.util.Collections.sort(unreachable);
        double rate = 0;
        if (weighted[0] > 0 && published.isPresent() && !Double.isNaN(dbNow[0])) {
            double elapsed = Math.max(1.0, dbNow[0] - published.get().toEpochMilli() / 1000.0);
            rate = weighted[0] / tau / (1 - Math.exp(-elapsed / tau));
        }
        return new Live(rate, workers[0], workers[1], unreachable);
    }

    /** Runs by status (every status present in the control database). */
    public Map<String, Long> countByStatus() {
        Map<String, Long> out = new LinkedHashMap<>();
        control.useHandle(h -> h.createQuery("SELECT status, count(*) AS n FROM runs GROUP BY status ORDER BY status")
                .mapToMap()
                .forEach(m -> out.put((String) m.get("status"), ((Number) m.get("n")).longValue())));
        return out;
    }

    /** Chunk and worker counts of the runs still executing; an unreachable execution database is listed, not fatal. */
    public ActiveCounts activeCounts() {
        List<UUID> active = control.withHandle(
                h -> h.createQuery("SELECT run_id FROM runs WHERE " + RunLifecycle.executing("status"))
                        .mapTo(UUID.class)
                        .list());
        Map<String, Long> byState = new TreeMap<>();
        for (String s : List.of("queued", "leased", "done", "failed")) {
            byState.put(s, 0L);
        }
        long[] cases = new long[3];
        List<String> unreachable = new ArrayList<>();
        Map<UUID, Long> queued = new TreeMap<>();
        active.forEach(r -> queued.put(r, 0L));
        if (!active.isEmpty()) {
            for (String alias : placements.aliases()) {
                try {
                    LocalTransactions.inSnapshot(
                            placements.jdbi(alias), "chunk counts in execution database \"" + alias + "\"", h -> {
                                h.createQuery("SELECT c.run_id, c.state, count(*) AS n, sum(c.case_count) AS cases"
                                                + " FROM exec_chunks c JOIN exec_run_shards s USING (run_id, shard)"
                                                + " WHERE c.run_id = ANY(:ids) AND s.state <> 'moved'"
                                                + " GROUP BY c.run_id, c.state")
                                        .bindArray("ids", UUID.class, active)
                                        .mapToMap()
                                        .forEach(m -> {
                                            long c = ((Number) m.get("cases")).longValue();
                                            long n = ((Number) m.get("n")).longValue();
                                            byState.merge((String) m.get("state"), n, Long::sum);
                                            if ("queued".equals(m.get("state"))) {
                                                queued.merge((UUID) m.get("run_id"), n, Long::sum);
                                            }
                                            cases[1] += c;
                                            if ("done".equals(m.get("state"))) {
                                                cases[0] += c;
                                            }
                                        });
                                cases[2] += h.createQuery("SELECT count(DISTINCT lease_owner) FROM exec_chunks WHERE"
                                                + " run_id = ANY(:ids) AND state = 'leased' AND lease_expires_at >"
                                                + " now()")
                                        .bindArray("ids", UUID.class, active)
                                        .mapTo(Long.class)
                                        .one();
                                return null;
                            });
                } catch (UnavailableException e) {
                    unreachable.add(alias);
                }
            }
        }
        return new ActiveCounts(byState, cases[0], cases[1], cases[2], unreachable, queued);
    }

    private static Instant instant(Object o) {
        if (o instanceof OffsetDateTime t) {
            return t.toInstant();
        }
        if (o instanceof java.sql.Timestamp t) {
            return t.toInstant();
        }
        throw new IllegalStateException("unexpected timestamp type " + o.getClass());
    }

    /**
     * One earlier settlement of a run that reran its errors ({@code vigilo run rerun-errors}, docs/execution.md
     * "Rerun errors"), as the rerun history keeps it.
     *
     * @param generation  1 for the first settlement, one more per rerun
     * @param status      settled or failed
     * @param gates       the gate table then, in gate order
     * @param rerunCases  how many cases (a failed chunk counting once) the reopening queued again
     * @param rerunByType per error type (alphabetical), the cases queued again: their ids (with the epochs run again
     *                    in a run of several), a failed chunk as {@code chunk N}
     */
    public record EarlierSettlement(
            int generation,
            String status,
            Optional<String> verdict,
            Optional<String> failureReason,
            Optional<Instant> finishedAt,
            Instant reopenedAt,
            List<EarlierGate> gates,
            int rerunCases,
            Map<String, List<String>> rerunByType) {
        public EarlierSettlement {
            gates = List.copyOf(gates);
            rerunByType = java.util.Collections.unmodifiableMap(new TreeMap<>(rerunByType));
        }
    }

    /** One gate of an earlier settlement: its counts and what it decided ({@code decision} empty when undecided). */
    public record EarlierGate(
            String name, long planned, long passed, long failed, long errored, Optional<String> decision) {}

    /** The run's earlier settlements, oldest first; empty for a run that never reran its errors. */
    public List<EarlierSettlement> history(UUID runId) {
        Objects.requireNonNull(runId, "runId");
        List<EarlierSettlement> out = new ArrayList<>();
        for (var h : control.withHandle(x -> dev.vigilo.exec.record.RerunRecords.history(x, runId))) {
            List<EarlierGate> gates = new ArrayList<>();
            for (var g : h.gates()) {
                gates.add(new EarlierGate(
                        g.path("name").asText(),
                        g.path("planned").asLong(),
                        g.path("passed").asLong(),
                        g.path("failed").asLong(),
                        g.path("errored").asLong(),
                        g.path("decision").isTextual()
                                ? Optional.of(g.path("decision").asText())
                                : Optional.empty()));
            }
            Map<String, List<String>> byType = new TreeMap<>();
            h.rerun().path("by_type").properties().forEach(t -> {
                List<String> cases = new ArrayList<>();
                for (var c : t.getValue()) {
                    String label = c.path("id").asText().isEmpty()
                            ? "chunk from ordinal " + c.path("ordinal").asLong()
                            : c.path("id").asText();
                    if (c.path("epochs").size() > 0) {
                        label += " (epochs " + c.path("epochs") + ")";
                    }
                    cases.add(label);
                }
                byType.put(t.getKey(), cases);
            });
            out.add(new EarlierSettlement(
                    h.generation(),
                    h.status(),
                    h.verdict(),
                    h.failureReason(),
                    h.finishedAt(),
                    h.reopenedAt(),
                    gates,
                    h.rerun().path("cases").asInt(),
                    byType));
        }
        return out;
    }
}
