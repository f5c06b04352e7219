package dev.vigilo.web;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.common.errors.NotFoundException;
import dev.vigilo.common.input.Names;
import dev.vigilo.dataset.DatasetCatalog;
import dev.vigilo.dataset.DatasetEntry;
import dev.vigilo.dataset.DatasetReader;
import dev.vigilo.dataset.StoredCase;
import dev.vigilo.exec.ExecutionStatus;
import dev.vigilo.exec.UsageSummary;
import dev.vigilo.exec.view.CaseResults;
import dev.vigilo.exec.view.ExecutionStatusReader;
import dev.vigilo.exec.view.RunCatalog;
import io.javalin.http.Context;
import io.javalin.http.HttpStatus;
import java.math.BigDecimal;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The results explorer (docs/web.md, "The results explorer"): the case list of a run as a table with filters (outcome,
 * gate, evaluator, error type, group, tag), a text search, sorts and keyset pages, its JSON API, case URLs by case id
 * and the previous and next case of a list on a case's page.
 *
 * <p>Every list reads a {@link CaseIndex} of the run, built once on first use (one pass over the run's receipts and
 * its dataset's case files) and kept in a cache bounded by {@link #BUDGET_BYTES} (least recently used runs leave
 * first). An index is rebuilt when the run's progress moved (its status, done or failed chunks), so a settled run's
 * index is built once. Thread-safe: one build per run at a time.
 */
final class ResultsExplorer {
    /** Heap the cached indexes may hold together: the server runs under -Xmx256m in the large-run test. */
    static final long BUDGET_BYTES = 96L * 1024 * 1024;
    /** The longest search text. */
    static final int MAX_SEARCH = 200;
    /** The query parameters of a list, in the order links carry them. */
    static final List<String> LIST_PARAMS =
            List.of("outcome", "gate", "evaluator", "error", "group", "tag", "q", "sort", "order");

    private final CaseResults cases;
    private final ExecutionStatusReader status;
    private final RunCatalog catalog;
    private final DatasetCatalog datasets;
    private final Stores stores;
    private final Views views;
    private final Map<UUID, Object> building = new ConcurrentHashMap<>();
    private final LinkedHashMap<UUID, Cached> cache = new LinkedHashMap<>(16, 0.75f, true);
    private long cachedBytes;

    private record Cached(String version, CaseIndex index) {}

    ResultsExplorer(
            CaseResults cases,
            ExecutionStatusReader status,
            RunCatalog catalog,
            DatasetCatalog datasets,
            Stores stores,
            Views views) {
        this.cases = cases;
        this.status = status;
        this.catalog = catalog;
        this.datasets = datasets;
        this.stores = stores;
        this.views = views;
    }

    // ---- the index and its cache

    /** The run's index, from the cache while the run's progress has not moved, else built now. */
    CaseIndex index(UUID runId) {
        String version = version(runId);
        Object lock = building.computeIfAbsent(runId, k -> new Object());
        synchronized (lock) {
            synchronized (this) {
                Cached c = cache.get(runId);
                if (c != null && c.version().equals(version)) {
                    return c.index();
                }
            }
            CaseIndex index = build(runId);
            synchronized (this) {
                Cached old = cache.put(runId, new Cached(version, index));
                if (old != null) {
                    cachedBytes -= old.index().bytes();
                }
                cachedBytes += index.bytes();
                var eldest = cache.entrySet().iterator();
                while (cachedBytes > BUDGET_BYTES && eldest.hasNext()) {
                    var e = eldest.next();
                    // The index just built serves this request even when it alone exceeds the budget.
                    cachedBytes -= e.getValue().index().bytes();
                    eldest.remove();
                }
            }
            return index;
        }
    }

    /** Heap the matrix's cached columns may hold together (about 2 MiB per 100,000 cases). */
    static final long COLUMN_BUDGET_BYTES = 32L * 1024 * 1024;

    private final LinkedHashMap<UUID, CachedColumn> columns = new LinkedHashMap<>(16, 0.75f, true);
    private long columnBytes;

    private record CachedColumn(String version, CaseIndex.Column column) {}

    /**
     * The run's matrix column (outcomes and scores without texts), cached apart from the indexes and under its own
     * budget, so a matrix of 8 runs of 100,000 cases keeps every column while the indexes come and go.
     */
    CaseIndex.Column column(UUID runId) {
        return column(runId, status.status(runId));
    }

    /**
     * As {@link #column(UUID)}, with the run's status as the caller just read it ({@code current}): a page that needs
     * the statuses anyway (the matrix) reads each once, not once for itself and once for the cache's version.
     */
    CaseIndex.Column column(UUID runId, ExecutionStatus current) {
        String version = version(current);
        synchronized (this) {
            CachedColumn c = columns.get(runId);
            if (c != null && c.version().equals(version)) {
                return c.column();
            }
        }
        CaseIndex.Column column = index(runId).column();
        synchronized (this) {
            CachedColumn old = columns.put(runId, new CachedColumn(version, column));
            if (old != null) {
                columnBytes -= old.column().bytes();
            }
            columnBytes += column.bytes();
            var eldest = columns.entrySet().iterator();
            while (columnBytes > COLUMN_BUDGET_BYTES && eldest.hasNext()) {
                var e = eldest.next();
                columnBytes -= e.getValue().column().bytes();
                eldest.remove();
            }
        }
        return column;
    }

    /** What a cached index or column of the run was built from: its status and counts of done and failed chunks. */
    private String version(UUID runId) {
        return version(status.status(runId));
    }

    private static String version(ExecutionStatus s) {
        return s.status() + ":" + s.execution().chunksDone() + ":"
                + s.execution().chunksFailed();
    }

    /** Bytes the cached indexes hold (for the tests of the budget). */
    synchronized long cachedBytes() {
        return cachedBytes;
    }

    /**
     * One pass over the run's receipts (in ordinal order), the dataset's fields read a chunk's range at a time: each
     * batch of consecutive cases reads the case files of its range once.
     */
    private CaseIndex build(UUID runId) {
        return build(runId, cases, catalog, datasets, stores);
    }

    /** Builds the index of a run (see {@link #index}); also {@link ResultLists}' one pass for the CLI. */
    static CaseIndex build(UUID runId, CaseResults cases, RunCatalog catalog, DatasetCatalog datasets, Stores stores) {
        RunCatalog.PlanIdentity identity = catalog.identity(runId);
        DatasetEntry entry = datasets.get(identity.datasetUploadId());
        DatasetReader reader = DatasetReader.open(entry, stores.forBinding(entry.storage()));
        CaseIndex.Builder b = new CaseIndex.Builder(runId);
        List<CaseResults.ScannedCase> batch = new ArrayList<>();
        List<String> gates = cases.scan(runId, c -> {
            if (!batch.isEmpty() && c.result().ordinal() - batch.get(0).result().ordinal() >= BATCH) {
                flush(reader, entry, batch, b);
            }
            batch.add(c);
        });
        flush(reader, entry, batch, b);
        b.gates(gates);
        return b.build();
    }

    /** Cases whose dataset fields are read together. */
    private static final int BATCH = 256;

    private static void flush(
            DatasetReader reader, DatasetEntry entry, List<CaseResults.ScannedCase> batch, CaseIndex.Builder b) {
        if (batch.isEmpty()) {
            return;
        }
        long first = batch.get(0).result().ordinal();
        long last = batch.get(batch.size() - 1).result().ordinal();
        Map<Long, CaseIndex.DatasetFields> fields = new HashMap<>();
        if (first < entry.caseCount()) {
            reader.forEachCaseInRange(
                    first,
                    Math.min(last, entry.caseCount() - 1) - first + 1,
                    sc -> fields.put(sc.ordinal(), fields(sc)));
        }
        for (CaseResults.ScannedCase c : batch) {
            b.add(
                    c,
                    fields.getOrDefault(
                            c.result().ordinal(), new CaseIndex.DatasetFields("", "", Optional.empty(), List.of())));
        }
        batch.clear();
    }

    private static CaseIndex.DatasetFields fields(StoredCase sc) {
        JsonNode json = StoredJson.datasetCase(sc.caseJson());
        return new CaseIndex.DatasetFields(
                text(StoredJson.input(json)),
                json.has("expected") ? text(json.path("expected")) : "",
                sc.fields().group(),
                sc.fields().tags());
    }

    private static String text(JsonNode n) {
        return n.isTextual() ? n.asText() : n.isMissingNode() ? "" : n.toString();
    }

    /** Whether the case at an ordinal is in {@code q}'s list of the run (read from its index). */
    java.util.function.LongPredicate ordinals(UUID runId, CaseIndex.Query q) {
        long[] listed = index(runId).ordinals(q);
        return ordinal -> java.util.Arrays.binarySearch(listed, ordinal) >= 0;
    }

    // ---- queries

    /** The list query of a request's parameters. */
    static CaseIndex.Query query(Context ctx) {
        Optional<CaseResults.Outcome> outcome =
                Params.query(ctx, "outcome").filter(o -> !o.equals("all")).map(CaseResults.Outcome::parse);
        Optional<String> text = Params.query(ctx, "q").map(String::strip).filter(x -> !x.isEmpty());
        if (text.isPresent() && text.get().length() > MAX_SEARCH) {
            throw new InvalidInputException(
                    "search text is longer than " + MAX_SEARCH + " characters; search for a shorter part");
        }
        String order = Params.query(ctx, "order").orElse("");
        if (!order.isEmpty() && !order.equals("asc") && !order.equals("desc")) {
            throw new InvalidInputException("order " + Names.quote(order) + " is not an order; use asc or desc");
        }
        CaseIndex.Sort sort =
                Params.query(ctx, "sort").map(CaseIndex.Sort::parse).orElse(CaseIndex.Sort.ORDINAL);
        return new CaseIndex.Query(
                outcome,
                Params.query(ctx, "gate"),
                Params.query(ctx, "evaluator"),
                Params.query(ctx, "error"),
                Params.query(ctx, "group"),
                Params.query(ctx, "tag"),
                text,
                sort,
                order.equals("desc"));
    }

    /** Whether the request names a list (any list parameter): a case page then pages within it. */
    static boolean namesList(Context ctx) {
        return LIST_PARAMS.stream().anyMatch(p -> Params.query(ctx, p).isPresent());
    }

    /** The query string of {@code q} ({@code outcome=failed&q=...}), empty for the whole list in ordinal order. */
    static String queryString(CaseIndex.Query q) {
        StringBuilder b = new StringBuilder();
        q.outcome().ifPresent(o -> add(b, "outcome", o.spelling()));
        q.gate().ifPresent(v -> add(b, "gate", v));
        q.evaluator().ifPresent(v -> add(b, "evaluator", v));
        q.errorType().ifPresent(v -> add(b, "error", v));
        q.group().ifPresent(v -> add(b, "group", v));
        q.tag().ifPresent(v -> add(b, "tag", v));
        q.text().ifPresent(v -> add(b, "q", v));
        if (q.sort() != CaseIndex.Sort.ORDINAL) {
            add(b, "sort", q.sort().spelling());
        }
        if (q.descending()) {
            add(b, "order", "desc");
        }
        return b.toString();
    }

    private static void add(StringBuilder b, String key, String value) {
        if (b.length() > 0) {
            b.append('&');
        }
        b.append(key).append('=').append(URLEncoder.encode(value, StandardCharsets.UTF_8));
    }

    /** The URL of a case by its id, carrying the list it was opened from. */
    static String caseHref(UUID runId, String caseId, CaseIndex.Query q) {
        String list = queryString(q);
        return "/runs/" + runId + "/case?id=" + URLEncoder.encode(caseId, StandardCharsets.UTF_8)
                + (list.isEmpty() ? "" : "&" + list);
    }

    private static String listHref(UUID runId, CaseIndex.Query q, OptionalLong after) {
        String list = queryString(q);
        StringBuilder b = new StringBuilder("/runs/").append(runId).append("/cases");
        if (!list.isEmpty() || after.isPresent()) {
            b.append('?').append(list);
        }
        after.ifPresent(
                a -> b.append(list.isEmpty() ? "" : "&").append("after=").append(a));
        return b.toString();
    }

    // ---- pages

    /** {@code GET /runs/{run}/cases}: the explorer's table. */
    void casesPage(Context ctx, int defaultLimit) {
        UUID id = Params.runId(ctx);
        CaseIndex.Query q = query(ctx);
        long after = Params.number(ctx, "after", -1, Long.MAX_VALUE, -1);
        int limit = (int) Params.number(ctx, "limit", 1, CaseResults.MAX_LIMIT, defaultLimit);
        CaseIndex index = index(id);
        CaseIndex.Page page = index.page(q, after, limit);
        Map<String, Object> m = views.page(new RunNames(catalog).of(id) + " · cases · run " + id, "runs");
        m.put("id", id.toString());
        String outcome = q.outcome().map(CaseResults.Outcome::spelling).orElse("all");
        m.put("outcome", outcome);
        m.put("gate", q.gate().orElse(""));
        m.put("q", q.text().orElse(""));
        m.put("group", q.group().orElse(""));
        m.put("tag", q.tag().orElse(""));
        m.put("total", Views.count(page.total()));
        List<Map<String, Object>> tabs = new ArrayList<>();
        int all = page.outcomeCounts().values().stream()
                .mapToInt(Integer::intValue)
                .sum();
        tabs.add(tab("all", all, listHref(id, q.withOutcome(Optional.empty()), OptionalLong.empty()), outcome));
        for (CaseResults.Outcome o : new CaseResults.Outcome[] {
            CaseResults.Outcome.FAILED, CaseResults.Outcome.ERRORED, CaseResults.Outcome.PASSED
        }) {
            tabs.add(tab(
                    o.spelling(),
                    page.outcomeCounts().get(o),
                    listHref(id, q.withOutcome(Optional.of(o)), OptionalLong.empty()),
                    outcome));
        }
        m.put("tabs", tabs);
        m.put("gates", options(index.gates, q.gate(), page.gateCounts()));
        m.put("evaluators", options(index.evaluators, q.evaluator(), Map.of()));
        List<Map<String, Object>> errors = new ArrayList<>();
        page.errorCounts().forEach((type, count) -> {
            Map<String, Object> e = new LinkedHashMap<>();
            e.put("type", type);
            e.put("count", Views.count(count));
            e.put("selected", q.errorType().map(type::equals).orElse(false));
            e.put(
                    "href",
                    listHref(
                            id,
                            new CaseIndex.Query(
                                    q.outcome(),
                                    q.gate(),
                                    q.evaluator(),
                                    Optional.of(type),
                                    q.group(),
                                    q.tag(),
                                    q.text(),
                                    q.sort(),
                                    q.descending()),
                            OptionalLong.empty()));
            errors.add(e);
        });
        m.put("error_types", errors);
        m.put("has_error_types", !errors.isEmpty());
        q.errorType().ifPresent(t -> m.put("error_selected", t));
        List<Map<String, Object>> sorts = new ArrayList<>();
        for (CaseIndex.Sort s : CaseIndex.Sort.values()) {
            sorts.add(Map.of("value", s.spelling(), "selected", s == q.sort()));
        }
        m.put("sorts", sorts);
        m.put("desc", q.descending());
        List<Map<String, Object>> rows = new ArrayList<>();
        for (CaseIndex.Row r : page.rows()) {
            rows.add(row(id, r, q));
        }
        m.put("cases", rows);
        m.put("empty", rows.isEmpty());
        m.put("indexed", Views.count(index.size()));
        m.put("download_jsonl", downloadHref(id, q, "jsonl"));
        m.put("download_csv", downloadHref(id, q, "csv"));
        m.put("download_command", command(id, q));
        page.nextAfter().ifPresent(n -> m.put("next", listHref(id, q, OptionalLong.of(n))));
        if (after >= 0) {
            m.put("first", listHref(id, q, OptionalLong.empty()));
        }
        views.render(ctx, "cases", m);
    }

    private static Map<String, Object> tab(String label, int count, String href, String current) {
        Map<String, Object> t = new LinkedHashMap<>();
        t.put("label", label);
        t.put("count", Views.count(count));
        t.put("href", href);
        t.put("current", label.equals(current));
        return t;
    }

    private static List<Map<String, Object>> options(
            List<String> names, Optional<String> selected, Map<String, Map<CaseResults.Outcome, Integer>> counts) {
        List<Map<String, Object>> out = new ArrayList<>();
        for (String name : names) {
            Map<String, Object> o = new LinkedHashMap<>();
            o.put("name", name);
            o.put("selected", selected.map(name::equals).orElse(false));
            Map<CaseResults.Outcome, Integer> c = counts.get(name);
            o.put(
                    "label",
                    c == null
                            ? name
                            : name + " (" + c.get(CaseResults.Outcome.PASSED) + " passed, "
                                    + c.get(CaseResults.Outcome.FAILED) + " failed, "
                                    + c.get(CaseResults.Outcome.ERRORED) + " errored)");
            out.add(o);
        }
        return out;
    }

    /** Cells shown before "show more" in the table. */
    static final int CELL_CHARS = 80;

    private static Map<String, Object> row(UUID id, CaseIndex.Row r, CaseIndex.Query q) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("ordinal", r.ordinal());
        m.put("href", caseHref(id, r.caseId(), q));
        m.put("case_id", r.caseId());
        m.put("outcome", r.outcome().spelling());
        m.put("input", cell(r.input()));
        m.put("expected", cell(r.expected()));
        m.put("output", cell(r.output()));
        m.put("reason", cell(r.reason()));
        List<Map<String, Object>> evals = new ArrayList<>();
        r.evaluators()
                .forEach((name, o) -> evals.add(Map.of(
                        "name",
                        name,
                        "outcome",
                        o,
                        "score",
                        Scoring.score(Optional.of(r.scores().get(name))))));
        m.put("evaluators", evals);
        m.put("attempts", r.attempts());
        m.put("epochs", r.epochs());
        m.put("agent_time", Views.millis(r.agentMillis()));
        m.put("tokens", r.tokens() < 0 ? "" : Views.count(r.tokens()));
        m.put(
                "cost",
                r.tokens() < 0
                        ? ""
                        : r.costUsd()
                                .map(c -> "$" + UsageSummary.decimal(BigDecimal.valueOf(c)))
                                .orElse("unknown"));
        return m;
    }

    /** A table cell: its head, and the whole kept text when longer (shown on demand). */
    private static Map<String, Object> cell(String text) {
        String oneLine = text.replace('\n', ' ');
        Map<String, Object> c = new LinkedHashMap<>();
        c.put("head", Views.cut(oneLine, CELL_CHARS));
        c.put("long", oneLine.length() > CELL_CHARS);
        c.put("full", text);
        return c;
    }

    private static String downloadHref(UUID id, CaseIndex.Query q, String format) {
        StringBuilder b =
                new StringBuilder("/runs/").append(id).append("/results.").append(format);
        String list = queryString(q);
        return list.isEmpty() ? b.toString() : b.append('?').append(list).toString();
    }

    /** The command that prints what a download of the list gives. */
    private static String command(UUID id, CaseIndex.Query q) {
        StringBuilder b = new StringBuilder("vigilo run results ").append(id);
        q.outcome().ifPresent(o -> b.append(" --outcome ").append(o.spelling()));
        q.gate().ifPresent(g -> b.append(" --gate ").append(shell(g)));
        q.evaluator().ifPresent(g -> b.append(" --evaluator ").append(shell(g)));
        q.errorType().ifPresent(g -> b.append(" --error-type ").append(shell(g)));
        q.group().ifPresent(g -> b.append(" --group ").append(shell(g)));
        q.tag().ifPresent(g -> b.append(" --tag ").append(shell(g)));
        q.text().ifPresent(g -> b.append(" --search ").append(shell(g)));
        // Downloads and the command list the cases in ordinal order whatever the table's sort.
        return b.toString();
    }

    private static String shell(String s) {
        return s.matches("[A-Za-z0-9._:/-]+") ? s : "'" + s.replace("'", "'\\''") + "'";
    }

    /** {@code GET /api/runs/{run}/cases}: the same list as JSON. */
    void casesApi(Context ctx, int defaultLimit) {
        UUID id = Params.runId(ctx);
        CaseIndex.Query q = query(ctx);
        long after = Params.number(ctx, "after", -1, Long.MAX_VALUE, -1);
        int limit = (int) Params.number(ctx, "limit", 1, CaseResults.MAX_LIMIT, defaultLimit);
        CaseIndex index = index(id);
        CaseIndex.Page page = index.page(q, after, limit);
        ObjectNode o = Dashboard.JSON.createObjectNode().put("run_id", id.toString());
        o.put("total", page.total());
        ObjectNode counts = o.putObject("outcome_counts");
        page.outcomeCounts().forEach((k, v) -> counts.put(k.spelling(), v));
        ObjectNode gates = o.putObject("gate_counts");
        page.gateCounts().forEach((g, c) -> {
            ObjectNode gn = gates.putObject(g);
            c.forEach((k, v) -> gn.put(k.spelling(), v));
        });
        ObjectNode errors = o.putObject("error_counts");
        page.errorCounts().forEach(errors::put);
        ArrayNode a = o.putArray("cases");
        for (CaseIndex.Row r : page.rows()) {
            ObjectNode n = a.addObject()
                    .put("ordinal", r.ordinal())
                    .put("case_id", r.caseId())
                    .put("href", caseHref(id, r.caseId(), q))
                    .put("outcome", r.outcome().spelling());
            ObjectNode g = n.putObject("gates");
            r.gates().forEach(g::put);
            ObjectNode e = n.putObject("evaluators");
            r.evaluators()
                    .forEach((name, x) -> e.putObject(name)
                            .put("outcome", x)
                            .put("score", r.scores().get(name)));
            n.put("error_type", r.errorType().orElse(null));
            n.put("input", r.input());
            n.put("expected", r.expected());
            n.put("output", r.output());
            n.put("reason", r.reason());
            n.put("attempts", r.attempts()).put("epochs", r.epochs()).put("agent_ms", r.agentMillis());
            if (r.tokens() < 0) {
                n.putNull("tokens");
            } else {
                n.put("tokens", r.tokens());
            }
            n.put(
                    "cost_usd",
                    r.costUsd()
                            .map(c -> UsageSummary.decimal(BigDecimal.valueOf(c)))
                            .orElse(null));
            n.put("group", r.group());
            ArrayNode t = n.putArray("tags");
            r.tags().forEach(t::add);
        }
        if (page.nextAfter().isPresent()) {
            o.put("next_after", page.nextAfter().getAsLong());
        } else {
            o.putNull("next_after");
        }
        o.put("text_bytes_kept", CaseIndex.TEXT_BYTES);
        Dashboard.json(ctx, o);
    }

    /**
     * {@code GET /runs/{run}/case?id=CASE&...}: a case by its id. Redirects to its page by ordinal, keeping the list
     * it was opened from, so every link of the case page (transcripts, files) stays as it was.
     */
    void caseById(Context ctx) {
        UUID id = Params.runId(ctx);
        String caseId = Params.query(ctx, "id")
                .orElseThrow(() -> new InvalidInputException("a case URL needs ?id=CASE_ID (the case's id)"));
        long ordinal = index(id)
                .ordinalOf(caseId)
                .orElseThrow(() ->
                        new NotFoundException("run " + id + " has executed no case with id " + Names.quote(caseId)));
        String list = queryString(query(ctx));
        ctx.redirect("/runs/" + id + "/cases/" + ordinal + (list.isEmpty() ? "" : "?" + list), HttpStatus.SEE_OTHER);
    }

    /**
     * The previous and next case of the list a case page was opened from, as links keeping the list, with the case's
     * place in it ("3 of 41"); empty when the case is not in that list.
     */
    Optional<Map<String, Object>> neighbours(Context ctx, UUID runId, long ordinal) {
        CaseIndex.Query q = query(ctx);
        CaseIndex index = index(runId);
        Optional<long[]> n = index.neighbours(q, ordinal);
        if (n.isEmpty()) {
            return Optional.empty();
        }
        String list = queryString(q);
        String suffix = list.isEmpty() ? "" : "?" + list;
        Map<String, Object> m = new LinkedHashMap<>();
        long[] x = n.get();
        if (x[0] >= 0) {
            m.put("prev", "/runs/" + runId + "/cases/" + x[0] + suffix);
        }
        if (x[1] >= 0) {
            m.put("next", "/runs/" + runId + "/cases/" + x[1] + suffix);
        }
        m.put("place", String.format(Locale.ROOT, "%s of %s", Views.count(x[2] + 1), Views.count(x[3])));
        m.put("list", listHref(runId, q, OptionalLong.empty()));
        return Optional.of(m);
    }
}
