package dev.vigilo.web;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.vigilo.agent.Evaluators;
import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.common.errors.NotFoundException;
import dev.vigilo.common.errors.VigiloException;
import dev.vigilo.common.input.Ids;
import dev.vigilo.common.input.Names;
import dev.vigilo.dataset.DatasetCatalog;
import dev.vigilo.dataset.DatasetEntry;
import dev.vigilo.dataset.DatasetReader;
import dev.vigilo.dataset.StoredCase;
import dev.vigilo.exec.ExecutionStatus;
import dev.vigilo.exec.GateDecision;
import dev.vigilo.exec.GateResult;
import dev.vigilo.exec.UsageSummary;
import dev.vigilo.exec.settlement.RunCancellation;
import dev.vigilo.exec.settlement.RunPause;
import dev.vigilo.exec.view.CaseResults;
import dev.vigilo.exec.view.ExecutionStatusReader;
import dev.vigilo.exec.view.RunCatalog;
import dev.vigilo.exec.view.RunResults;
import dev.vigilo.exec.view.RunTranscripts;
import dev.vigilo.llm.Pricing;
import dev.vigilo.plan.PlanShape;
import dev.vigilo.plan.Profile;
import dev.vigilo.plan.PublishedPlan;
import dev.vigilo.plan.RunGroups;
import dev.vigilo.plan.RunState;
import dev.vigilo.plan.RunStatus;
import dev.vigilo.plan.RunStatusReader;
import dev.vigilo.stats.ProportionInterval;
import dev.vigilo.storage.Deadline;
import dev.vigilo.storage.ObjectStore;
import dev.vigilo.storage.StoreBinding;
import io.javalin.http.Context;
import io.javalin.http.HttpStatus;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.UUID;

/** The runs pages and their API: the run list, a run (gates, progress, shard map, identity), its cases, one case. */
final class RunPages {
    static final int RUNS_PER_PAGE = 50;
    static final int CASES_PER_PAGE = 50;
    /** Longest output or input shown on a page; the API returns outputs whole. */
    static final int SHOWN_CHARS = 64 * 1024;

    private final DashboardSources.Databases sources;
    private final Stores stores;
    private final Views views;
    private final RunCatalog catalog;
    private final ExecutionStatusReader status;
    private final RunStatusReader preparation;
    private final CaseResults cases;
    private final RunResults results;
    private final DatasetCatalog datasets;
    private final CaseTranscriptPages transcripts;
    private final ReviewPages reviews;
    private final ResultsExplorer explorer;
    private final MatrixPages matrix;
    private final String workerCommand;
    private final RunGroups groups;
    private final GroupPages groupList;

    RunPages(DashboardSources.Databases sources, Stores stores, Views views, String workerCommand) {
        this.sources = sources;
        this.workerCommand = workerCommand;
        this.stores = stores;
        this.views = views;
        this.catalog = new RunCatalog(sources.placements());
        this.status = new ExecutionStatusReader(sources.placements());
        this.preparation = new RunStatusReader(sources.control());
        this.cases = new CaseResults(sources.placements(), sources.storage());
        this.results = new RunResults(sources.placements(), sources.storage());
        this.datasets = new DatasetCatalog(sources.control());
        this.transcripts = new CaseTranscriptPages(
                cases,
                new RunTranscripts(sources.placements(), sources.storage()),
                views,
                this::passScores,
                new RunNames(catalog));
        this.reviews = new ReviewPages(sources);
        this.explorer = new ResultsExplorer(cases, status, catalog, datasets, stores, views);
        this.groups = new RunGroups(sources.control());
        this.matrix = new MatrixPages(explorer, catalog, status, views, groups);
        this.groupList = new GroupPages(groups, status, datasets, views);
    }

    /** Human review: the case page's form and the reviewed gate table (their routes are its own). */
    ReviewPages reviews() {
        return reviews;
    }

    /** The matrix of several runs of one dataset. */
    MatrixPages matrix() {
        return matrix;
    }

    /** The list of run groups ({@code /groups}). */
    GroupPages groupList() {
        return groupList;
    }

    /** The results explorer: the case list, its API and case URLs by id. */
    ResultsExplorer explorer() {
        return explorer;
    }

    /** A case's transcript pages (they share this reader of cases). */
    CaseTranscriptPages transcripts() {
        return transcripts;
    }

    // ---- the run list

    private RunCatalog.Page runs(Context ctx) {
        Optional<RunCatalog.Cursor> after = Params.query(ctx, "after").map(RunCatalog.Cursor::parse);
        int limit = (int) Params.number(ctx, "limit", 1, RunCatalog.MAX_LIMIT, RUNS_PER_PAGE);
        return catalog.list(filter(ctx), after, limit);
    }

    /** The list's filter: {@code ?status=}, {@code ?dataset=} (an upload id), {@code ?name=} (a part of the name). */
    private static RunCatalog.Filter filter(Context ctx) {
        Optional<RunState> status = Params.query(ctx, "status")
                .filter(x -> !x.isBlank())
                .map(x -> {
                    try {
                        return RunState.fromSpelling(x.strip());
                    } catch (IllegalArgumentException e) {
                        throw new InvalidInputException(
                                "status \"" + Names.printable(x) + "\" is not a run state; use one of "
                                        + java.util.Arrays.stream(RunState.values())
                                                .map(RunState::spelling)
                                                .collect(java.util.stream.Collectors.joining(", ")));
                    }
                });
        Optional<UUID> dataset = Params.query(ctx, "dataset")
                .filter(x -> !x.isBlank())
                .map(x -> Ids.uuid(x.strip(), "dataset", "dataset upload id", "see the datasets page for their ids"));
        return new RunCatalog.Filter(status, dataset, Params.query(ctx, "name"));
    }

    /** The filter's query string for the list's links ({@code status=...&name=...&}), empty without one. */
    private static String filterQuery(RunCatalog.Filter f) {
        StringBuilder q = new StringBuilder();
        f.status().ifPresent(s -> q.append("status=").append(s.spelling()).append('&'));
        f.dataset().ifPresent(d -> q.append("dataset=").append(d).append('&'));
        f.name()
                .ifPresent(n -> q.append("name=")
                        .append(java.net.URLEncoder.encode(n, java.nio.charset.StandardCharsets.UTF_8))
                        .append('&'));
        return q.toString();
    }

    /** How long reading a run's plan configuration for its page may take. */
    private static final java.time.Duration PLAN_READ = java.time.Duration.ofSeconds(10);

    /** Runs offered by the compare picker. */
    static final int PEERS = 50;

    void listPage(Context ctx) {
        RunCatalog.Page page = runs(ctx);
        Map<String, Object> m = views.page("Runs", "runs");
        List<Map<String, Object>> rows = new ArrayList<>();
        Map<UUID, RunGroups.Membership> member = groups.membershipOf(
                page.runs().stream().map(RunCatalog.RunSummary::runId).toList());
        for (RunCatalog.RunSummary r : page.runs()) {
            Map<String, Object> row = new LinkedHashMap<>();
            row.put("id", r.runId().toString());
            RunGroups.Membership inGroup = member.get(r.runId());
            if (inGroup != null) {
                row.put("group_id", inGroup.groupId().toString());
                row.put("group_name", inGroup.groupName());
                row.put("group_agent", inGroup.agentName());
            }
            row.put("status", r.status());
            row.put("verdict", r.verdict().orElse(""));
            row.put("dataset", r.datasetName());
            row.put("dataset_id", r.datasetUploadId().toString());
            row.put("created", Views.time(r.createdAt()));
            row.put("cases", r.cases());
            if (r.casesDone() >= 0) {
                double f = r.cases() == 0 ? 0 : (double) r.casesDone() / r.cases();
                row.put(
                        "progress",
                        Views.count(r.casesDone()) + " / " + Views.count(r.cases()) + " cases (" + Views.percent(f)
                                + ")");
                row.put("level", Views.level(f));
            } else {
                row.put("progress", "unknown: an execution database is unreachable");
                row.put("level", "lvl-0");
            }
            row.put("chunks", Views.count(r.chunksDone()) + " / " + Views.count(r.expectedChunks()));
            row.put("failed_chunks", r.chunksFailed() > 0 ? r.chunksFailed() : null);
            row.put("name", r.identity().map(RunCatalog.Identity::name).orElse("(unnamed)"));
            row.put("short_id", r.runId().toString().substring(0, 8));
            row.put("agent", r.identity().map(RunCatalog.Identity::agent).orElse(""));
            row.put(
                    "pass_rate",
                    r.outcome()
                            .firstGate()
                            .map(g -> Views.percent(g.getValue()) + " " + g.getKey())
                            .orElse(""));
            row.put(
                    "duration",
                    r.finishedAt()
                            .map(f -> Views.duration(java.time.Duration.between(r.createdAt(), f)))
                            .orElse(""));
            row.put("cost", cost(r.outcome()));
            rows.add(row);
        }
        m.put("runs", rows);
        m.put("empty", rows.isEmpty());
        RunCatalog.Filter f = filter(ctx);
        boolean filtered = !f.equals(RunCatalog.Filter.ALL);
        m.put("filtered", filtered);
        m.put("filter_name", f.name().orElse(""));
        m.put("filter_dataset", f.dataset().map(UUID::toString).orElse(""));
        List<Map<String, Object>> states = new ArrayList<>();
        states.add(Map.of(
                "value", "", "label", "any status", "selected", f.status().isEmpty()));
        for (RunState st : RunState.values()) {
            states.add(Map.of(
                    "value",
                    st.spelling(),
                    "label",
                    st.spelling(),
                    "selected",
                    f.status().equals(Optional.of(st))));
        }
        m.put("states", states);
        page.next().ifPresent(c -> m.put("next", "/runs?" + filterQuery(f) + "after=" + c));
        m.put("paged", Params.query(ctx, "after").isPresent());
        views.render(ctx, "runs", m);
    }

    /** A settled run's cost for the list: {@code $0.0123 · 45,678 tokens}, tokens alone while a price is missing. */
    private static String cost(RunCatalog.Outcome o) {
        if (o.tokens().isEmpty()) {
            return "";
        }
        String tokens = Views.count(o.tokens().getAsLong()) + " tokens";
        return o.costUsd().map(c -> "$" + Pricing.text(c) + " · " + tokens).orElse(tokens + ", cost unknown");
    }

    void listApi(Context ctx) {
        RunCatalog.Page page = runs(ctx);
        ObjectNode o = Dashboard.JSON.createObjectNode();
        ArrayNode a = o.putArray("runs");
        Map<UUID, RunGroups.Membership> member = groups.membershipOf(
                page.runs().stream().map(RunCatalog.RunSummary::runId).toList());
        for (RunCatalog.RunSummary r : page.runs()) {
            ObjectNode n = a.addObject()
                    .put("run_id", r.runId().toString())
                    .put("status", r.status())
                    .put("verdict", r.verdict().orElse(null))
                    .put("created_at", r.createdAt().toString())
                    .put("finished_at", r.finishedAt().map(Object::toString).orElse(null))
                    .put("dataset_upload_id", r.datasetUploadId().toString())
                    .put("dataset_name", r.datasetName())
                    .put("plan_status", r.planStatus())
                    .put("expected_chunks", r.expectedChunks())
                    .put("cases", r.cases());
            if (r.identity().isPresent()) {
                RunCatalog.Identity i = r.identity().get();
                n.put("name", i.name())
                        .put("label", i.label().orElse(null))
                        .put("agent_kind", i.agentKind())
                        .put("agent_model", i.agentModel().orElse(null));
            } else {
                n.putNull("name").putNull("label").putNull("agent_kind").putNull("agent_model");
            }
            r.outcome()
                    .firstGate()
                    .ifPresentOrElse(
                            g -> n.putObject("first_gate")
                                    .put("name", g.getKey())
                                    .put("pass_rate", g.getValue()),
                            () -> n.putNull("first_gate"));
            if (r.outcome().tokens().isPresent()) {
                n.put("tokens", r.outcome().tokens().getAsLong());
            } else {
                n.putNull("tokens");
            }
            n.put("cost_usd", r.outcome().costUsd().orElse(null));
            RunGroups.Membership inGroup = member.get(r.runId());
            if (inGroup == null) {
                n.putNull("group");
            } else {
                n.putObject("group")
                        .put("group_id", inGroup.groupId().toString())
                        .put("name", inGroup.groupName())
                        .put("agent", inGroup.agentName());
            }
            if (r.casesDone() >= 0) {
                n.put("chunks_done", r.chunksDone())
                        .put("chunks_failed", r.chunksFailed())
                        .put("cases_done", r.casesDone());
            } else {
                n.putNull("chunks_done").putNull("chunks_failed").putNull("cases_done");
            }
        }
        o.put("next", page.next().map(Object::toString).orElse(null));
        Dashboard.json(ctx, o);
    }

    // ---- run groups

    /** The most runs a matrix shows; a larger group opens with its first ones. */
    static final int GROUP_MATRIX_RUNS = 8;

    /**
     * {@code GET /groups/{group}} (its id or name): 303 to the matrix of its member runs that exist, in the group's
     * order (the first {@link #GROUP_MATRIX_RUNS}); to the run's page when only one exists; 404 when none does yet.
     */
    void groupPage(Context ctx) {
        RunGroups.Group g = groups.get(ctx.pathParam("group"));
        List<UUID> existing = existingRuns(g);
        if (existing.isEmpty()) {
            throw new NotFoundException("run group " + Names.quote(g.name()) + " has no run yet (its creation was"
                    + " interrupted); repeat the `vigilo run create --agents` command that made it");
        }
        if (existing.size() == 1) {
            ctx.redirect("/runs/" + existing.get(0), HttpStatus.SEE_OTHER);
            return;
        }
        StringBuilder q = new StringBuilder("/matrix?");
        for (int i = 0; i < existing.size() && i < GROUP_MATRIX_RUNS; i++) {
            q.append(i == 0 ? "" : "&").append("run=").append(existing.get(i));
        }
        ctx.redirect(q.toString(), HttpStatus.SEE_OTHER);
    }

    /** {@code GET /api/groups/{group}}: the group, its members and whether each one's run exists. */
    void groupApi(Context ctx) {
        RunGroups.Group g = groups.get(ctx.pathParam("group"));
        List<UUID> existing = existingRuns(g);
        ObjectNode o = Dashboard.JSON
                .createObjectNode()
                .put("group_id", g.groupId().toString())
                .put("name", g.name())
                .put("dataset_upload_id", g.datasetUploadId().toString())
                .put("created_at", g.createdAt().toString())
                .put("completed_at", g.completedAt().map(Object::toString).orElse(null));
        ArrayNode a = o.putArray("members");
        for (RunGroups.Member mem : g.members()) {
            a.addObject()
                    .put("position", mem.position())
                    .put("agent", mem.agentName())
                    .put("run_id", mem.runId().toString())
                    .put("created", existing.contains(mem.runId()));
        }
        Dashboard.json(ctx, o);
    }

    /** The group's member runs that exist, in order (an interrupted creation may have left some to do). */
    private List<UUID> existingRuns(RunGroups.Group g) {
        List<UUID> out = new ArrayList<>();
        for (RunGroups.Member mem : g.members()) {
            try {
                catalog.identity(mem.runId());
                out.add(mem.runId());
            } catch (NotFoundException e) {
                // not created yet
            }
        }
        return out;
    }

    // ---- one run

    void runPage(Context ctx) {
        UUID id = Params.runId(ctx);
        RunCatalog.PlanIdentity identity = catalog.identity(id);
        ExecutionStatus s = status.status(id);
        RunStatus prep = preparation.status(id);
        String name = identity.runIdentity().map(RunCatalog.Identity::name).orElse("");
        Map<String, Object> m = views.page(name.isEmpty() ? "Run " + id : name + " · run " + id, "runs");
        m.put("name", name.isEmpty() ? null : name);
        m.put("agent", identity.runIdentity().map(RunCatalog.Identity::agent).orElse(null));
        RunGroups.Membership inGroup = groups.membershipOf(List.of(id)).get(id);
        if (inGroup != null) {
            m.put("group_id", inGroup.groupId().toString());
            m.put("group_name", inGroup.groupName());
            m.put("group_agent", inGroup.agentName());
        }
        m.put("id", id.toString());
        m.put("status", s.status());
        m.put("verdict", s.verdict().orElse(""));
        m.put("failure_reason", s.failureReason().orElse(null));
        m.put("rejection", identity.rejection().orElse(null));
        m.put("live", !s.finished());
        m.put("cancellable", List.of("creating", "pending", "running", "paused").contains(s.status()));
        m.put("pausable", List.of("pending", "running").contains(s.status()));
        m.put("resumable", s.status().equals("paused"));
        m.put("paused", s.paused().map(ExecutionStatus.Paused::line).orElse(null));
        m.put(
                "budget_paused",
                s.paused().filter(x -> x.reason().equals(RunPause.BUDGET)).isPresent());
        m.put("budget", s.budget().map(ExecutionStatus.Budget::line).orElse(null));
        // Each fleet limiter of the run's endpoints: its rate and why it last changed, an open circuit and since when.
        m.put("has_limiters", !s.limiters().isEmpty());
        m.put(
                "limiters",
                s.limiters().stream()
                        .map(l -> Map.of("line", l.line(), "open", !l.circuit().equals("closed")))
                        .toList());
        m.put("plan_status", identity.planStatus());
        m.put("creation_cursor", prep.creationProgress().planChunkCursor() + " / " + prep.expectedChunks());
        ExecutionStatus.Progress p = s.execution();
        double f = p.cases() == 0 ? 0 : (double) p.casesDone() / p.cases();
        m.put("chunks", Views.count(p.chunks()));
        m.put("chunks_done", Views.count(p.chunksDone()));
        m.put("chunks_failed", Views.count(p.chunksFailed()));
        // Chunks claimed again after a lease of theirs expired (a worker died, was cut off or stalled; docs/cli.md,
        // "run status"): a give-back at SIGTERM does not count.
        m.put("chunks_requeued_after_expiry", Views.count(p.chunksRequeuedAfterExpiry()));
        m.put("cases", Views.count(p.cases()));
        m.put("cases_done", Views.count(p.casesDone()));
        m.put("percent", Views.percent(f));
        m.put("level", Views.level(f));
        m.put("shards", shardCells(p));
        m.put("waiting", waitLines(s));
        m.put("unreachable", p.unreachable().isEmpty() ? null : String.join(", ", p.unreachable()));
        m.put("routed_shards", p.shards().size());
        m.put("gates", gateRows(s));
        m.put("has_gates", !s.gates().isEmpty());
        m.put("usage", s.runUsage().map(UsageSummary::line).orElse(null));
        m.put("agreement", s.agreementLine(ExecutionStatus.ALL_CASES).orElse(null));
        m.put("gate_usage", gateUsage(s));
        m.put("peers", peers(id, identity));
        m.put("has_pass_at_k", s.gates().stream().anyMatch(g -> g.passAtK().isPresent()));
        putLive(m, s, s.finished() ? Optional.empty() : Optional.of(catalog.live(id)));
        m.put("gates_final", s.gatesFinal());
        m.put("gates_undecided", !s.gatesFinal() && s.finished());
        // Plan identity
        m.put("dataset_id", identity.datasetUploadId().toString());
        m.put("dataset_name", identity.datasetName());
        m.put("dataset_sha", identity.datasetSourceSha256());
        m.put("membership", identity.membershipUuid().toString());
        m.put("profile_sha", identity.profileSha256());
        m.put("storage", identity.storageBinding());
        m.put("placement", identity.initialPlacement());
        identity.root().ifPresent(r -> {
            m.put("root_key", r.key().value());
            m.put("root_length", r.length());
            m.put("root_sha", r.sha256().toHex());
        });
        m.put("created", Views.time(identity.createdAt()));
        m.put("published", identity.publishedAt().map(Views::time).orElse(""));
        m.put("finished", identity.finishedAt().map(Views::time).orElse(""));
        List<Map<String, Object>> links = new ArrayList<>();
        for (String o : new String[] {"failed", "errored", "passed"}) {
            links.add(Map.of("outcome", o, "href", "/runs/" + id + "/cases?outcome=" + o));
        }
        m.put("case_links", links);
        List<Map<String, Object>> reruns = rerunRows(catalog.history(id));
        m.put("reruns", reruns);
        m.put("has_reruns", !reruns.isEmpty());
        putProfile(m, id, identity);
        reviews.putGates(m, id, s.gates(), s.finished());
        views.render(ctx, "run", m);
    }

    /** The run's earlier settlements (docs/execution.md, "Rerun errors"), newest first, for the run page. */
    static List<Map<String, Object>> rerunRows(List<RunCatalog.EarlierSettlement> history) {
        List<Map<String, Object>> out = new ArrayList<>();
        for (RunCatalog.EarlierSettlement e : history) {
            Map<String, Object> row = new java.util.HashMap<>();
            row.put("generation", e.generation());
            row.put("status", e.status());
            row.put("verdict", e.verdict().orElse(null));
            row.put("failure_reason", e.failureReason().orElse(null));
            row.put("finished", e.finishedAt().map(Views::time).orElse(null));
            row.put("reopened", Views.time(e.reopenedAt()));
            row.put("rerun_cases", e.rerunCases());
            List<Map<String, Object>> gates = new ArrayList<>();
            for (RunCatalog.EarlierGate g : e.gates()) {
                gates.add(Map.of(
                        "name", g.name(),
                        "planned", g.planned(),
                        "passed", g.passed(),
                        "failed", g.failed(),
                        "errored", g.errored(),
                        "decision", g.decision().orElse("")));
            }
            row.put("gates", gates);
            List<Map<String, Object>> types = new ArrayList<>();
            e.rerunByType()
                    .forEach((type, cases) ->
                            types.add(Map.of("type", type, "count", cases.size(), "cases", String.join(", ", cases))));
            row.put("types", types);
            out.add(0, row);
        }
        return out;
    }

    /**
     * The run's profile in readable form ({@link ProfileView}), read from its published plan's configuration
     * (verified through the plan root); a line saying why when it cannot be read (no plan yet, or the store fails).
     */
    private void putProfile(Map<String, Object> m, UUID id, RunCatalog.PlanIdentity identity) {
        if (identity.root().isEmpty()) {
            m.put("profile_missing", "The profile is shown once the plan is published.");
            return;
        }
        try {
            m.put("profile", ProfileView.of(configuration(id, identity).path("profile")));
        } catch (VigiloException e) {
            m.put("profile_missing", "The profile cannot be read now: " + e.getMessage());
        }
    }

    /** The published plan's configuration, verified through the plan root (the plan must be published). */
    private JsonNode configuration(UUID id, RunCatalog.PlanIdentity identity) {
        ObjectStore store = stores.forBinding(new StoreBinding(identity.storageBinding()));
        return PublishedPlan.open(id, identity.root().orElseThrow(), store, Deadline.after(PLAN_READ))
                .configuration(Deadline.after(PLAN_READ));
    }

    /**
     * Each evaluator's pass score by name, as the worker judges with it ({@link Evaluators#passScore} over the plan's
     * evaluator plan); empty when the plan cannot be read now, and the pages then leave the column blank.
     */
    Map<String, Double> passScores(UUID id) {
        try {
            RunCatalog.PlanIdentity identity = catalog.identity(id);
            if (identity.root().isEmpty()) {
                return Map.of();
            }
            Map<String, Double> scores = new LinkedHashMap<>();
            for (JsonNode e : configuration(id, identity).path("evaluator_plan")) {
                scores.put(e.path("name").asText(), Evaluators.passScore(e));
            }
            return scores;
        } catch (VigiloException e) {
            return Map.of();
        }
    }

    private static List<Map<String, Object>> shardCells(ExecutionStatus.Progress p) {
        Map<Integer, ExecutionStatus.ShardProgress> byShard = new LinkedHashMap<>();
        p.shards().forEach(s -> byShard.put(s.shard(), s));
        List<Map<String, Object>> cells = new ArrayList<>(PlanShape.SHARDS);
        for (int i = 0; i < PlanShape.SHARDS; i++) {
            ExecutionStatus.ShardProgress s = byShard.get(i);
            Map<String, Object> c = new LinkedHashMap<>();
            c.put("shard", i);
            if (s == null) {
                c.put("class", "cell unused");
                c.put("title", "shard " + i + ": unused");
            } else if (!s.known()) {
                c.put("class", "cell unknown");
                c.put(
                        "title",
                        "shard " + i + " (" + s.placement() + ", " + s.state() + "): " + s.chunks() + " chunks, "
                                + s.cases() + " cases; progress unknown (execution database unreachable)");
            } else {
                double f = s.cases() == 0 ? 0 : (double) s.casesDone() / s.cases();
                c.put("class", "cell " + Views.level(f) + (s.chunksFailed() > 0 ? " has-failed" : ""));
                c.put(
                        "title",
                        "shard " + i + " (" + s.placement() + ", " + s.state() + "): " + s.chunksDone() + "/"
                                + s.chunks() + " chunks, " + s.casesDone() + "/" + s.cases() + " cases"
                                + (s.chunksFailed() > 0 ? ", " + s.chunksFailed() + " failed chunks" : ""));
            }
            cells.add(c);
        }
        return cells;
    }

    /**
     * One line per service the run's workers wait for: {@code waiting for the store since T (target, 1 worker):
     * error}, as {@code run status} prints it.
     */
    private static List<Map<String, Object>> waitLines(ExecutionStatus s) {
        List<Map<String, Object>> lines = new ArrayList<>();
        for (ExecutionStatus.Wait w : s.waiting()) {
            lines.add(Map.of(
                    "for",
                    w.service().wire(),
                    "line",
                    w.describe() + " (" + w.target() + ", " + w.workers() + " worker" + (w.workers() == 1 ? "" : "s")
                            + "): " + w.error()));
        }
        return lines;
    }

    private static List<Map<String, Object>> gateRows(ExecutionStatus s) {
        List<Map<String, Object>> rows = new ArrayList<>();
        for (GateResult g : s.gates()) {
            Map<String, Object> r = new LinkedHashMap<>();
            r.put("name", g.name());
            r.put("planned", Views.count(g.planned()));
            r.put("executed", Views.count(g.executed()));
            r.put("passed", Views.count(g.passed()));
            r.put("failed", Views.count(g.failed()));
            r.put("errored", Views.count(g.errored()));
            r.put("pass_rate", Views.percent(g.passRate()));
            r.put("executed_pass_rate", executedRate(g).map(Views::percent).orElse("–"));
            r.put("min_pass_rate", Views.percent(g.minPassRate()));
            ProportionInterval i = g.interval();
            r.put("ci", "[" + Views.percent(i.low()) + ", " + Views.percent(i.high()) + "]");
            r.put("confidence", Views.confidence(g.confidence()));
            r.put("stderr", Views.percent(i.stderr()));
            r.put("decide", g.decide() == Profile.Decide.POINT ? "point rate" : "interval (bound)");
            r.put("pass_at_k", passAtK(g));
            // A run that ended without a recorded table (cancelled) gets no decision: nothing more will run.
            r.put("decision", g.decision().map(GateDecision::spelling).orElse(s.finished() ? "none" : "pending"));
            if (g.decision().equals(Optional.of(GateDecision.INCONCLUSIVE))) {
                OptionalLong n = g.casesToDecide();
                r.put(
                        "to_decide",
                        (n.isPresent()
                                        ? n.getAsLong() + " cases at the observed " + Views.percent(i.rate()) + " ("
                                                + (n.getAsLong() - g.planned()) + " more than the " + g.planned()
                                                + " planned) would " + (i.rate() > g.minPassRate() ? "pass" : "fail")
                                                + " it"
                                        : "no number of cases at the observed " + Views.percent(i.rate())
                                                + " would decide it")
                                + g.epochsAdvice());
            }
            rows.add(r);
        }
        return rows;
    }

    /**
     * A gate's pass@k in a run of several epochs, as {@code run status} shows it: {@code pass@1 0.62 · pass@3 0.91}
     * (the k of {@link GateResult#passAtKShown}); empty with one epoch.
     */
    static String passAtK(GateResult g) {
        List<String> parts = new ArrayList<>();
        g.passAtKShown()
                .forEach((k, v) -> parts.add("pass@" + k + " " + String.format(java.util.Locale.ROOT, "%.2f", v)));
        return String.join(" · ", parts);
    }

    /** A gate's pass rate over the cases executed so far (passed / executed); empty before any executed. */
    static Optional<Double> executedRate(GateResult g) {
        return g.executed() == 0 ? Optional.empty() : Optional.of((double) g.passed() / g.executed());
    }

    /** The smoothed throughput now as the page shows it: {@code 0.52 cases/s}, {@code 34.1 cases/s}. */
    static String rate(double casesPerSecond) {
        return String.format(java.util.Locale.ROOT, casesPerSecond < 10 ? "%.2f" : "%.1f", casesPerSecond) + " cases/s";
    }

    /**
     * Seconds until the run's remaining cases are done at the smoothed rate; empty unless it is running with a rate
     * above 0 and cases left.
     */
    static OptionalLong etaSeconds(ExecutionStatus s, RunCatalog.Live live) {
        long left = s.execution().cases() - s.execution().casesDone();
        if (!s.status().equals("running") || live.casesPerSecond() <= 0 || left <= 0) {
            return OptionalLong.empty();
        }
        return OptionalLong.of((long) Math.ceil(left / live.casesPerSecond()));
    }

    /**
     * The live lines of an executing run's page (docs/web.md, "Live runs"): the smoothed throughput, the ETA, and
     * while no worker works on it, how to start one.
     */
    private void putLive(Map<String, Object> m, ExecutionStatus s, Optional<RunCatalog.Live> live) {
        m.put("worker_command", workerCommand);
        if (live.isEmpty()) {
            return;
        }
        RunCatalog.Live l = live.get();
        m.put("rate_now", rate(l.casesPerSecond()));
        OptionalLong eta = etaSeconds(s, l);
        m.put(
                "eta",
                eta.isPresent()
                        ? Views.duration(java.time.Duration.ofSeconds(eta.getAsLong())) + " (about "
                                + Views.time(java.time.Instant.now().plusSeconds(eta.getAsLong())) + ")"
                        : "unknown");
        m.put("no_worker", noWorker(s, l));
    }

    /** Whether the page says how to start a worker: a pending or running run no live worker works on. */
    private static boolean noWorker(ExecutionStatus s, RunCatalog.Live l) {
        return List.of("pending", "running").contains(s.status()) && l.noWorker();
    }

    void runApi(Context ctx) {
        UUID id = Params.runId(ctx);
        ObjectNode doc = (ObjectNode) read(preparation.status(id).toJson());
        ExecutionStatus es = status.status(id);
        es.addTo(doc);
        // Each gate's pass rate over its executed cases beside the one over its planned cases.
        for (int g = 0; g < es.gates().size() && g < doc.path("gates").size(); g++) {
            ObjectNode gate = (ObjectNode) doc.path("gates").get(g);
            gate.put("executed_pass_rate", executedRate(es.gates().get(g)).orElse(null));
        }
        ObjectNode liveNode = doc.putObject("live");
        if (es.finished()) {
            liveNode.putNull("cases_per_second").putNull("eta_seconds").putNull("workers_leasing");
            liveNode.putNull("workers_seen").put("no_worker", false).putNull("worker_command");
        } else {
            RunCatalog.Live l = catalog.live(id);
            OptionalLong eta = etaSeconds(es, l);
            liveNode.put("cases_per_second", l.casesPerSecond());
            if (eta.isPresent()) {
                liveNode.put("eta_seconds", eta.getAsLong())
                        .put(
                                "eta_at",
                                java.time.Instant.now()
                                        .plusSeconds(eta.getAsLong())
                                        .toString());
            } else {
                liveNode.putNull("eta_seconds").putNull("eta_at");
            }
            liveNode.put("workers_leasing", l.leasingWorkers())
                    .put("workers_seen", l.seenWorkers())
                    .put("no_worker", noWorker(es, l))
                    .put("worker_command", workerCommand);
            ArrayNode u = liveNode.putArray("unreachable");
            l.unreachable().forEach(u::add);
        }
        RunCatalog.PlanIdentity i = catalog.identity(id);
        RunGroups.Membership inGroup = groups.membershipOf(List.of(id)).get(id);
        if (inGroup == null) {
            doc.putNull("group");
        } else {
            doc.putObject("group")
                    .put("group_id", inGroup.groupId().toString())
                    .put("name", inGroup.groupName())
                    .put("agent", inGroup.agentName());
        }
        ObjectNode n = doc.putObject("identity")
                .put("dataset_upload_id", i.datasetUploadId().toString())
                .put("dataset_name", i.datasetName())
                .put("dataset_source_sha256", i.datasetSourceSha256())
                .put("dataset_membership_uuid", i.membershipUuid().toString())
                .put("profile_sha256", i.profileSha256())
                .put("storage", i.storageBinding())
                .put("initial_placement", i.initialPlacement())
                .put("created_at", i.createdAt().toString())
                .put("published_at", i.publishedAt().map(Object::toString).orElse(null))
                .put("finished_at", i.finishedAt().map(Object::toString).orElse(null))
                .put("name", i.runIdentity().map(RunCatalog.Identity::name).orElse(null))
                .put(
                        "label",
                        i.runIdentity().flatMap(RunCatalog.Identity::label).orElse(null))
                .put(
                        "agent_kind",
                        i.runIdentity().map(RunCatalog.Identity::agentKind).orElse(null))
                .put(
                        "agent_model",
                        i.runIdentity().flatMap(RunCatalog.Identity::agentModel).orElse(null));
        if (i.root().isPresent()) {
            n.putObject("root")
                    .put("key", i.root().get().key().value())
                    .put("length", i.root().get().length())
                    .put("sha256", i.root().get().sha256().toHex());
        } else {
            n.putNull("root");
        }
        List<RunCatalog.EarlierSettlement> history = catalog.history(id);
        if (!history.isEmpty()) {
            // A run that reran its errors: its earlier settlements, oldest first (docs/execution.md, "Rerun errors").
            var reruns = doc.putArray("reruns");
            for (RunCatalog.EarlierSettlement e : history) {
                ObjectNode x = reruns.addObject()
                        .put("generation", e.generation())
                        .put("status", e.status())
                        .put("verdict", e.verdict().orElse(null))
                        .put("finished_at", e.finishedAt().map(Object::toString).orElse(null))
                        .put("reopened_at", e.reopenedAt().toString())
                        .put("rerun_cases", e.rerunCases());
                var gates = x.putArray("gates");
                for (RunCatalog.EarlierGate g : e.gates()) {
                    gates.addObject()
                            .put("name", g.name())
                            .put("planned", g.planned())
                            .put("passed", g.passed())
                            .put("failed", g.failed())
                            .put("errored", g.errored())
                            .put("decision", g.decision().orElse(null));
                }
                ObjectNode byType = x.putObject("rerun_by_type");
                e.rerunByType().forEach((type, cases) -> cases.forEach(byType.withArray(type)::add));
            }
        }
        Dashboard.json(ctx, doc);
    }

    void throughputApi(Context ctx) {
        UUID id = Params.runId(ctx);
        int buckets = (int) Params.number(ctx, "buckets", 1, RunCatalog.MAX_BUCKETS, 120);
        List<RunCatalog.ThroughputPoint> points = catalog.throughput(id, buckets);
        ObjectNode o = Dashboard.JSON.createObjectNode().put("run_id", id.toString());
        o.put("bucket_seconds", points.isEmpty() ? 0 : points.get(0).width().toMillis() / 1000.0);
        ArrayNode a = o.putArray("points");
        // The smoothed series: an exponentially weighted mean of the buckets' rates with the live rate's time constant
        // (a bucket of width w keeps exp(-w / 60 s) of the mean before it), so chunk-sized spikes read as a rate.
        double tau = RunCatalog.RATE_TIME_CONSTANT.toMillis() / 1000.0;
        double smoothed = Double.NaN;
        for (RunCatalog.ThroughputPoint p : points) {
            double w = Math.max(0.001, p.width().toMillis() / 1000.0);
            double r = p.cases() / w;
            double keep = Math.exp(-w / tau);
            smoothed = Double.isNaN(smoothed) ? r : keep * smoothed + (1 - keep) * r;
            a.addObject()
                    .put("t", p.start().toEpochMilli() / 1000.0)
                    .put("cases", p.cases())
                    .put("cases_per_second", r)
                    .put("smoothed_cases_per_second", smoothed);
        }
        Dashboard.json(ctx, o);
    }

    // ---- cases

    private record CasesQuery(CaseResults.Filter filter, long after, int limit) {}

    private static CasesQuery casesQuery(Context ctx) {
        Optional<CaseResults.Outcome> outcome =
                Params.query(ctx, "outcome").filter(o -> !o.equals("all")).map(CaseResults.Outcome::parse);
        Optional<String> gate = Params.query(ctx, "gate");
        long after = Params.number(ctx, "after", -1, Long.MAX_VALUE, -1);
        int limit = (int) Params.number(ctx, "limit", 1, CaseResults.MAX_LIMIT, CASES_PER_PAGE);
        return new CasesQuery(new CaseResults.Filter(outcome, gate), after, limit);
    }

    void casesPage(Context ctx) {
        explorer.casesPage(ctx, CASES_PER_PAGE);
    }

    /**
     * The filtered case list as a download: {@code /runs/ID/results.jsonl} or {@code .csv} with the list's {@code
     * outcome} and {@code gate}: what {@code vigilo run results ID --format F --outcome O --gate G} prints, streamed.
     */
    void resultsDownload(Context ctx) {
        UUID id = Params.runId(ctx);
        preparation.status(id); // an unknown run: 404 before anything is streamed
        CaseResults.Filter filter = casesQuery(ctx).filter();
        // The explorer's further filters (evaluator, error type, group, tag, search) narrow the same stream.
        java.util.function.LongPredicate listed =
                ResultsExplorer.namesList(ctx) ? explorer.ordinals(id, ResultsExplorer.query(ctx)) : ordinal -> true;
        boolean csv = ctx.path().endsWith(".csv");
        ctx.contentType(csv ? "text/csv; charset=utf-8" : "application/x-ndjson; charset=utf-8");
        ctx.header(
                "Content-Disposition",
                "attachment; filename=\"results-" + id
                        + filter.outcome().map(o -> "-" + o.spelling()).orElse("") + (csv ? ".csv" : ".jsonl") + "\"");
        try (java.io.OutputStream out = ctx.outputStream()) {
            results.write(id, out, filter, csv ? RunResults.Format.CSV : RunResults.Format.JSONL, listed);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    void casesApi(Context ctx) {
        explorer.casesApi(ctx, CASES_PER_PAGE);
    }

    private static ObjectNode caseJson(CaseResults.ExecutedCase c) {
        ObjectNode n = Dashboard.JSON
                .createObjectNode()
                .put("ordinal", c.ordinal())
                .put("case_id", c.caseId())
                .put("shard", c.shard())
                .put("chunk", c.chunk())
                .put("outcome", c.outcome().spelling())
                .put("status", c.agentErrored() ? "errored" : "ok")
                .put("attempts", c.attempts())
                .put("agent_ms", c.agentMillis())
                .put("output_length", c.outputLength())
                .put("output_stored_apart", c.outputStoredApart());
        ObjectNode gates = n.putObject("gates");
        c.gates().forEach(gates::put);
        ObjectNode evals = n.putObject("evaluators");
        for (CaseResults.EvaluatorOutcome e : c.evaluators()) {
            ObjectNode en = evals.putObject(e.name())
                    .put("passed", e.passed())
                    .put("score", e.score())
                    .put("reason", e.reason().orElse(null))
                    .put("ms", e.millis());
            putError(en, e.errorType(), e.errorMessage());
        }
        putError(n, c.errorType(), c.errorMessage());
        c.usage().ifPresent(u -> u.putJson(n.putObject("usage")));
        if (!c.epochPasses().isEmpty()) {
            ObjectNode passes = n.putObject("epoch_passes");
            c.epochPasses().forEach(passes::put);
        }
        return n;
    }

    /**
     * Why a case did not pass, when its agent answered: the first evaluator that errored (its error) or failed (its
     * reason and score); empty for a case every evaluator passed.
     */
    static String why(CaseResults.ExecutedCase c) {
        for (CaseResults.EvaluatorOutcome e : c.evaluators()) {
            if (e.errorType().isPresent()) {
                return e.name() + ": " + e.errorType().get() + ": "
                        + Views.cut(e.errorMessage().orElse(""), 200);
            }
            if (!e.passed()) {
                return e.name() + " failed (score " + e.score() + ")"
                        + e.reason().map(x -> ": " + Views.cut(x, 200)).orElse("");
            }
        }
        return "";
    }

    private static void putError(ObjectNode n, Optional<String> type, Optional<String> message) {
        if (type.isPresent()) {
            n.putObject("error").put("type", type.get()).put("message", message.orElse(""));
        } else {
            n.putNull("error");
        }
    }

    /** The dataset case at {@code ordinal} of the run's dataset, when it can be read. */
    private Optional<StoredCase> datasetCase(UUID datasetId, long ordinal) {
        DatasetEntry entry = datasets.get(datasetId);
        if (ordinal >= entry.caseCount()) {
            return Optional.empty();
        }
        StoredCase[] found = new StoredCase[1];
        DatasetReader.open(entry, stores.forBinding(entry.storage())).forEachCaseInRange(ordinal, 1, c -> found[0] = c);
        return Optional.ofNullable(found[0]);
    }

    /** Case {@code ordinal} of run {@code id}'s dataset; an ordinal beyond the dataset is not found (404). */
    private StoredCase runCase(UUID id, long ordinal, RunCatalog.PlanIdentity identity) {
        return datasetCase(identity.datasetUploadId(), ordinal)
                .orElseThrow(() -> new NotFoundException("run " + id + " has no case " + ordinal + "; its dataset has "
                        + identity.datasetCaseCount() + " cases"));
    }

    void casePage(Context ctx) {
        Params.CaseRef ref = Params.caseRef(ctx);
        UUID id = ref.run();
        long ordinal = ref.ordinal();
        RunCatalog.PlanIdentity identity = catalog.identity(id);
        StoredCase input = runCase(id, ordinal, identity);
        Optional<CaseResults.CaseDetail> detail = cases.find(id, ordinal);
        Map<String, Object> m =
                views.page(new RunNames(catalog).of(id) + " · case " + ordinal + " · run " + id, "runs");
        m.put("id", id.toString());
        m.put("ordinal", ordinal);
        JsonNode caseJson = StoredJson.datasetCase(input.caseJson());
        m.put("case_id", input.id());
        m.put("input", Views.cut(pretty(StoredJson.input(caseJson)), SHOWN_CHARS));
        m.put("expected", caseJson.has("expected") ? Views.cut(pretty(caseJson.path("expected")), SHOWN_CHARS) : null);
        m.put("group", input.fields().group().orElse(""));
        m.put("tags", String.join(", ", input.fields().tags()));
        if (ResultsExplorer.namesList(ctx)) {
            // Opened from a filtered or sorted list: previous and next within it.
            explorer.neighbours(ctx, id, ordinal).ifPresent(m::putAll);
        } else {
            if (ordinal > 0) {
                m.put("prev", "/runs/" + id + "/cases/" + (ordinal - 1));
            }
            if (ordinal + 1 < identity.datasetCaseCount()) {
                m.put("next", "/runs/" + id + "/cases/" + (ordinal + 1));
            }
        }
        if (detail.isPresent()) {
            CaseResults.CaseDetail d = detail.get();
            CaseResults.ExecutedCase c = d.result();
            m.put("executed", true);
            m.put("outcome", c.outcome().spelling());
            m.put("status", c.agentErrored() ? "errored" : "ok");
            m.put("attempts", c.attempts());
            m.put("agent_time", Views.millis(c.agentMillis()));
            m.put(
                    "error",
                    c.errorType()
                            .map(t -> t + ": " + c.errorMessage().orElse(""))
                            .orElse(null));
            m.put("output", d.output().map(o -> Views.cut(o, SHOWN_CHARS)).orElse(null));
            m.put("output_length", Views.bytes(c.outputLength()));
            List<Map<String, Object>> evals = new ArrayList<>();
            Map<String, List<Map<String, Object>>> judgeCalls = transcripts.judgeCalls(id, d);
            Map<String, Double> passScores = passScores(id);
            for (CaseResults.EvaluatorOutcome e : c.evaluators()) {
                evals.add(Scoring.row(
                        e.name(),
                        e.errorType().isPresent() ? "errored" : e.passed() ? "passed" : "failed",
                        Scoring.score(Optional.of(e.score())),
                        Scoring.passScore(passScores.get(e.name())),
                        e.reason().orElse(""),
                        Views.millis(e.millis()),
                        e.errorType()
                                .map(t -> t + ": " + e.errorMessage().orElse(""))
                                .orElse(""),
                        judgeCalls.getOrDefault(e.name(), List.of())));
            }
            m.put("evaluators", evals);
            m.put("usage", c.usage().map(UsageSummary::line).orElse(null));
            List<Map<String, Object>> gates = new ArrayList<>();
            c.gates().forEach((g, v) -> gates.add(Map.of("name", g, "outcome", v)));
            m.put("gates", gates);
            m.put("receipt_key", d.receiptKey());
            m.put("generation", d.leaseGeneration());
            m.put("worker", d.worker().toString());
            m.put("chunk", c.chunk());
            m.put("shard", c.shard());
            m.put("chunk_started", Views.time(d.chunkStartedAt()));
            m.put("chunk_finished", Views.time(d.chunkFinishedAt()));
            m.put("case_sha", d.caseSha256());
            putEpochs(m, id, ordinal, d);
            transcripts.embed(m, id, ordinal, d);
            List<Map<String, Object>> kept = keptFiles(id, ordinal, d);
            m.put("kept_files", kept);
            m.put("has_kept_files", !kept.isEmpty());
        }
        reviews.putCase(m, id, ordinal, detail.isPresent());
        views.render(ctx, "case", m);
    }

    /**
     * A case of several epochs on its page: how many epochs passed each gate, and one row per epoch with its outcome,
     * attempts, gates, output and a link to each attempt's transcript.
     */
    private static void putEpochs(Map<String, Object> m, UUID id, long ordinal, CaseResults.CaseDetail d) {
        if (d.epochs().isEmpty()) {
            return;
        }
        int n = d.epochs().size();
        m.put("epoch_count", n);
        List<Map<String, Object>> passes = new ArrayList<>();
        d.result().epochPasses().forEach((g, p) -> passes.add(Map.of("name", g, "passes", p, "of", n)));
        m.put("epoch_passes", passes);
        List<Map<String, Object>> rows = new ArrayList<>();
        for (CaseResults.EpochDetail e : d.epochs()) {
            CaseResults.ExecutedCase c = e.result();
            Map<String, Object> r = new LinkedHashMap<>();
            r.put("epoch", e.epoch());
            r.put("outcome", c.outcome().spelling());
            r.put("status", c.agentErrored() ? "errored" : "ok");
            r.put("attempts", c.attempts());
            r.put("agent_time", Views.millis(c.agentMillis()));
            List<Map<String, Object>> gates = new ArrayList<>();
            c.gates().forEach((g, v) -> gates.add(Map.of("name", g, "outcome", v)));
            r.put("gates", gates);
            r.put(
                    "output",
                    e.output()
                            .map(o -> Views.cut(o, 200))
                            .orElse(c.errorType()
                                    .map(t -> t + ": "
                                            + Views.cut(c.errorMessage().orElse(""), 200))
                                    .orElse("")));
            r.put("transcripts", CaseTranscriptPages.attemptLinks(id, ordinal, e.epoch(), e.transcripts(), -1));
            rows.add(r);
        }
        m.put("epochs", rows);
    }

    /** The files the case's sandboxed executions kept, each with its download link (empty list for none). */
    private static List<Map<String, Object>> keptFiles(UUID id, long ordinal, CaseResults.CaseDetail d) {
        List<Map<String, Object>> out = new ArrayList<>();
        for (int i = 0; i < d.keptFiles().size(); i++) {
            CaseResults.KeptFile k = d.keptFiles().get(i);
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("epoch", k.epoch());
            m.put("epoch_text", k.epoch() == 0 ? "" : Integer.toString(k.epoch()));
            m.put("path", k.path());
            m.put("key", k.ref().key().value());
            m.put("length", k.ref().length());
            m.put("sha256", k.ref().sha256().toHex());
            m.put("href", "/runs/" + id + "/cases/" + ordinal + "/files/" + i);
            out.add(m);
        }
        return out;
    }

    /**
     * {@code GET /runs/{run}/cases/{ordinal}/files/{index}}: a kept file's bytes, verified against the receipt's
     * reference, as a download named by the file's own name (never rendered: it is what a sandboxed agent wrote).
     */
    void keptFile(Context ctx) {
        Params.CaseRef ref = Params.caseRef(ctx);
        UUID id = ref.run();
        long ordinal = ref.ordinal();
        int index = (int) Params.number(ctx.pathParam("index"), "index", 0, Integer.MAX_VALUE);
        byte[] bytes = cases.keptFile(id, ordinal, index);
        String path =
                cases.find(id, ordinal).orElseThrow().keptFiles().get(index).path();
        String name = path.substring(path.lastIndexOf('/') + 1).replaceAll("[^A-Za-z0-9._-]", "_");
        ctx.header("Content-Disposition", "attachment; filename=\"" + name + "\"");
        ctx.header("X-Content-Type-Options", "nosniff");
        ctx.contentType("application/octet-stream").result(bytes);
    }

    void caseApi(Context ctx) {
        Params.CaseRef ref = Params.caseRef(ctx);
        UUID id = ref.run();
        long ordinal = ref.ordinal();
        RunCatalog.PlanIdentity identity = catalog.identity(id);
        StoredCase input = runCase(id, ordinal, identity);
        ObjectNode o = Dashboard.JSON.createObjectNode().put("run_id", id.toString());
        o.put("ordinal", ordinal);
        o.set("case", StoredJson.datasetCase(input.caseJson()));
        Optional<CaseResults.CaseDetail> detail = cases.find(id, ordinal);
        o.put("executed", detail.isPresent());
        if (detail.isPresent()) {
            CaseResults.CaseDetail d = detail.get();
            ObjectNode r = caseJson(d.result());
            r.put("output", d.output().orElse(null));
            r.put("output_sha256", d.outputSha256().orElse(null));
            o.set("result", r);
            o.putObject("receipt")
                    .put("key", d.receiptKey())
                    .put("lease_generation", d.leaseGeneration())
                    .put("worker", d.worker().toString())
                    .put("started_at", d.chunkStartedAt().toString())
                    .put("finished_at", d.chunkFinishedAt().toString());
            CaseTranscriptPages.putAll(o, id, ordinal, 0, d.transcripts());
            if (!d.keptFiles().isEmpty()) {
                ArrayNode kept = r.putArray("kept_files");
                for (Map<String, Object> k : keptFiles(id, ordinal, d)) {
                    ObjectNode x = kept.addObject();
                    x.put("epoch", (Integer) k.get("epoch"));
                    x.put("path", (String) k.get("path"));
                    x.put("key", (String) k.get("key"));
                    x.put("length", (Long) k.get("length"));
                    x.put("sha256", (String) k.get("sha256"));
                    x.put("href", (String) k.get("href"));
                }
            }
            if (!d.epochs().isEmpty()) {
                ArrayNode epochs = r.putArray("epochs");
                for (CaseResults.EpochDetail e : d.epochs()) {
                    ObjectNode en = caseJson(e.result());
                    // An epoch's place is its case's: only its own result, output and transcripts are kept.
                    for (String k : new String[] {"ordinal", "case_id", "shard", "chunk"}) {
                        en.remove(k);
                    }
                    ObjectNode x = Dashboard.JSON.createObjectNode().put("epoch", e.epoch());
                    x.setAll(en);
                    x.put("output", e.output().orElse(null));
                    x.put("output_sha256", e.outputSha256().orElse(null));
                    CaseTranscriptPages.putAll(x, id, ordinal, e.epoch(), e.transcripts());
                    epochs.add(x);
                }
            }
        }
        Dashboard.json(ctx, o);
    }

    // ---- the state-changing actions: cancel, pause, resume

    void cancelForm(Context ctx) {
        UUID id = Params.runId(ctx);
        new RunCancellation(sources.placements()).cancel(id);
        ctx.redirect("/runs/" + id, HttpStatus.SEE_OTHER);
    }

    void cancelApi(Context ctx) {
        UUID id = Params.runId(ctx);
        RunCancellation.Result r = new RunCancellation(sources.placements()).cancel(id);
        ObjectNode o = Dashboard.JSON
                .createObjectNode()
                .put("run_id", id.toString())
                .put("outcome", r.outcome().name().toLowerCase(java.util.Locale.ROOT))
                .put("tombstoned_routes", r.tombstoned())
                .put("closed_shards", r.closedShards());
        ArrayNode u = o.putArray("unreachable");
        r.unreachable().forEach(u::add);
        Dashboard.json(ctx, o);
    }

    void pauseForm(Context ctx) {
        UUID id = Params.runId(ctx);
        // "Pause now" (vigilo run pause --now): the workers also give back the chunks they hold of the run.
        boolean now = "true".equals(ctx.formParam("now"));
        new RunPause(sources.placements()).pause(id, RunPause.BY_DASHBOARD, now);
        ctx.redirect("/runs/" + id, HttpStatus.SEE_OTHER);
    }

    void resumeForm(Context ctx) {
        UUID id = Params.runId(ctx);
        new RunPause(sources.placements()).resume(id);
        ctx.redirect("/runs/" + id, HttpStatus.SEE_OTHER);
    }

    void pauseApi(Context ctx) {
        boolean now = "true".equals(ctx.queryParam("now"));
        pauseJson(ctx, new RunPause(sources.placements()).pause(Params.runId(ctx), RunPause.BY_DASHBOARD, now));
    }

    void resumeApi(Context ctx) {
        pauseJson(ctx, new RunPause(sources.placements()).resume(Params.runId(ctx)));
    }

    private static void pauseJson(Context ctx, RunPause.Result r) {
        ObjectNode o = Dashboard.JSON
                .createObjectNode()
                .put("run_id", r.runId().toString())
                .put("outcome", r.outcome().name().toLowerCase(java.util.Locale.ROOT))
                .put("status", r.status().spelling())
                .put("shards", r.shards());
        ArrayNode u = o.putArray("unreachable");
        r.unreachable().forEach(u::add);
        Dashboard.json(ctx, o);
    }

    private static JsonNode read(String json) {
        try {
            return StoredJson.read(json);
        } catch (IOException e) {
            throw new IllegalStateException("unreadable JSON from a module: " + e.getMessage(), e);
        }
    }

    static String pretty(JsonNode n) {
        if (n.isTextual()) {
            return n.asText();
        }
        try {
            return Dashboard.JSON.writerWithDefaultPrettyPrinter().writeValueAsString(n);
        } catch (IOException e) {
            return n.toString();
        }
    }

    /**
     * Reads what the first visitor would, once, before the server listens: the databases are known to answer and the
     * code paths of the run list and a run's page are loaded, so the first request is not the slow one.
     */
    void warm() {
        RunCatalog.Page page = catalog.list(Optional.empty(), 1);
        for (RunCatalog.RunSummary r : page.runs()) {
            catalog.identity(r.runId());
            status.status(r.runId());
            preparation.status(r.runId());
        }
    }

    /**
     * Per gate, the model usage of the cases it selects and its panels' agreement, when the run records either
     * (receipts of version 4): {@code [{name, usage, agreement}]} in gate order.
     */
    private static List<Map<String, Object>> gateUsage(ExecutionStatus s) {
        List<Map<String, Object>> rows = new ArrayList<>();
        for (GateResult g : s.gates()) {
            Optional<String> usage = s.usage(g.name()).map(UsageSummary::line);
            Optional<String> agreement = s.agreementLine(g.name());
            if (usage.isPresent() || agreement.isPresent()) {
                Map<String, Object> r = new LinkedHashMap<>();
                r.put("name", g.name());
                r.put("usage", usage.orElse(null));
                r.put("agreement", agreement.orElse(null));
                rows.add(r);
            }
        }
        return rows;
    }

    /** The compare picker's choices: the newest other runs of the same dataset, labelled for people. */
    private List<Map<String, Object>> peers(UUID id, RunCatalog.PlanIdentity identity) {
        List<Map<String, Object>> out = new ArrayList<>();
        for (RunCatalog.Peer p : catalog.peers(identity.datasetUploadId(), id, PEERS)) {
            String name = p.identity().map(RunCatalog.Identity::name).orElse("(unnamed)");
            out.add(Map.of(
                    "id",
                    p.runId().toString(),
                    "label",
                    name + " · " + p.status()
                            + p.verdict().map(v -> " (" + v + ")").orElse("") + " · "
                            + p.identity().map(RunCatalog.Identity::agent).orElse("") + " · "
                            + Views.time(p.createdAt())));
        }
        return out;
    }

    /** The case reader, shared with the comparison pages (closed with these pages). */
    CaseResults cases() {
        return cases;
    }

    /** Closes the case reader's stores. */
    void close() {
        cases.close();
        reviews.close();
    }
}
