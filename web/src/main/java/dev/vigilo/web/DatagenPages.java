package dev.vigilo.web;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.vigilo.checkpoint.LogRoot;
import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.common.errors.NotFoundException;
import dev.vigilo.datagen.ExperimentStatus;
import dev.vigilo.datagen.Experiments;
import dev.vigilo.datagen.ItemStatus;
import dev.vigilo.dataset.DatasetCatalog;
import dev.vigilo.dataset.DatasetEntry;
import io.javalin.http.Context;
import java.io.IOException;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * The datagen pages and their API: the experiments under the durable root, an experiment's items by status (paged by
 * item id), and one item's trajectory (its events in order, fields as folded, failures with their dump and
 * traceback).
 */
final class DatagenPages {
    static final int ITEMS_PER_PAGE = 50;
    static final int SHOWN_CHARS = 16 * 1024;

    private final Optional<LogRoot> root;
    private final Views views;
    /** The catalog, for the datasets made from an experiment; empty on a dashboard without databases. */
    private final Optional<DatasetCatalog> catalog;

    DatagenPages(DashboardSources sources, Views views) {
        this.root = sources.datagenRoot();
        this.views = views;
        this.catalog = sources.databases().map(d -> new DatasetCatalog(d.control()));
    }

    private LogRoot root() {
        return root.orElseThrow(() -> new NotFoundException(
                "this dashboard shows no datagen experiments; start vigilo serve with --durable-root"));
    }

    void listPage(Context ctx) {
        Map<String, Object> m = views.page("Datagen experiments", "datagen");
        m.put("root", root.map(Object::toString).orElse("(none)"));
        List<Map<String, Object>> rows = new ArrayList<>();
        if (root.isPresent()) {
            for (Experiments.ExperimentRef e : Experiments.list(root.get())) {
                rows.add(Map.of(
                        "pipeline",
                        e.pipeline(),
                        "experiment",
                        e.experiment(),
                        "href",
                        "/datagen/" + e.pipeline() + "/" + e.experiment()));
            }
        }
        m.put("experiments", rows);
        m.put("empty", rows.isEmpty());
        views.render(ctx, "datagen", m);
    }

    void listApi(Context ctx) {
        ObjectNode o = Dashboard.JSON.createObjectNode();
        o.put("root", root.map(Object::toString).orElse(null));
        ArrayNode a = o.putArray("experiments");
        if (root.isPresent()) {
            Experiments.list(root.get())
                    .forEach(e -> a.addObject().put("pipeline", e.pipeline()).put("experiment", e.experiment()));
        }
        Dashboard.json(ctx, o);
    }

    private record ItemsQuery(Optional<ItemStatus> status, Optional<String> after, int limit) {}

    private static ItemsQuery itemsQuery(Context ctx) {
        Optional<ItemStatus> status = Params.query(ctx, "status")
                .filter(s -> !s.equals("all"))
                .map(s -> {
                    try {
                        return ItemStatus.valueOf(s.toUpperCase(Locale.ROOT));
                    } catch (IllegalArgumentException e) {
                        throw new InvalidInputException(
                                "unknown item status \"" + s + "\"; use running, completed, filtered or failed");
                    }
                });
        return new ItemsQuery(
                status, Params.query(ctx, "after"), (int) Params.number(ctx, "limit", 1, 1000, ITEMS_PER_PAGE));
    }

    void experimentPage(Context ctx) {
        String pipeline = Params.segment(ctx, "pipeline");
        String experiment = Params.segment(ctx, "experiment");
        ExperimentStatus s = Experiments.status(root(), pipeline, experiment);
        ItemsQuery q = itemsQuery(ctx);
        Experiments.ItemPage page = Experiments.items(root(), pipeline, experiment, q.status(), q.after(), q.limit());
        Map<String, Object> m = views.page("Experiment " + pipeline + "/" + experiment, "datagen");
        String base = "/datagen/" + pipeline + "/" + experiment;
        m.put("pipeline", pipeline);
        m.put("experiment", experiment);
        m.put("items", s.items());
        m.put("completed", s.completed());
        m.put("filtered", s.filtered());
        m.put("failed", s.failed());
        m.put("running", s.running());
        m.put("progress", Views.percent(s.progress()));
        m.put("level", Views.level(s.progress()));
        List<Map<String, Object>> types = new ArrayList<>();
        s.failuresByType().forEach((t, n) -> types.add(Map.of("type", t, "count", n)));
        m.put("failure_types", types);
        m.put("has_failure_types", !types.isEmpty());
        putUsage(m, s, pipeline, experiment);
        String current = q.status().map(x -> x.name().toLowerCase(Locale.ROOT)).orElse("all");
        List<Map<String, Object>> tabs = new ArrayList<>();
        for (String t : new String[] {"all", "running", "completed", "filtered", "failed"}) {
            tabs.add(Map.of("label", t, "href", base + "?status=" + t, "current", t.equals(current)));
        }
        m.put("tabs", tabs);
        List<Map<String, Object>> rows = new ArrayList<>();
        for (Experiments.ItemSummary i : page.items()) {
            Map<String, Object> r = new LinkedHashMap<>();
            r.put("item_id", i.itemId());
            r.put("href", base + "/item?id=" + URLEncoder.encode(i.itemId(), StandardCharsets.UTF_8));
            r.put("status", i.status().name().toLowerCase(Locale.ROOT));
            r.put("parent", i.parentItemId() == null ? "" : i.parentItemId());
            r.put("steps", i.completedSteps());
            r.put("failures", i.failures());
            r.put("last_error", i.lastErrorType().orElse(""));
            r.put("last_step", i.lastStep().orElse(""));
            rows.add(r);
        }
        m.put("rows", rows);
        m.put("empty", rows.isEmpty());
        List<Map<String, Object>> datasets = new ArrayList<>();
        for (DatasetEntry d : catalog.map(c -> c.madeFrom(pipeline, experiment)).orElse(List.of())) {
            datasets.add(Map.of(
                    "name", d.name(),
                    "href", "/datasets/" + d.uploadId(),
                    "cases", Views.count(d.caseCount()),
                    "created", d.createdAt().toString()));
        }
        m.put("datasets", datasets);
        m.put("has_datasets", !datasets.isEmpty());
        page.next()
                .ifPresent(n -> m.put(
                        "next",
                        base + "?status=" + current + "&after=" + URLEncoder.encode(n, StandardCharsets.UTF_8)));
        views.render(ctx, "experiment", m);
    }

    /**
     * The experiment's model usage, as {@code vigilo datagen status} prints it: all chat steps, then each step (requests,
     * re-sends, answers from the cache, tokens, cost at the pipeline's prices). Nothing for a pipeline without chat
     * steps, or before any chat attempt.
     */
    private static void putUsage(Map<String, Object> m, ExperimentStatus s, String pipeline, String experiment) {
        if (s.usage().requests() == 0 && s.usage().cachedAnswers() == 0) {
            return;
        }
        List<Map<String, Object>> rows = new ArrayList<>();
        rows.add(usageRow("all chat steps", s.usage(), true));
        s.usageByStep().forEach((step, u) -> rows.add(usageRow(step, u, false)));
        m.put("usage", rows);
        m.put("has_usage", true);
        m.put("usage_cli", "vigilo datagen status --pipeline " + pipeline + " --experiment " + experiment);
    }

    private static Map<String, Object> usageRow(String step, dev.vigilo.datagen.ChatUsage u, boolean total) {
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("step", step);
        r.put("total", total);
        r.put("requests", Views.count(u.requests()));
        r.put("retries", Views.count(u.retries()));
        r.put("cached", Views.count(u.cachedAnswers()));
        r.put("prompt_tokens", Views.count(u.promptTokens()));
        r.put("completion_tokens", Views.count(u.completionTokens()));
        r.put("tokens", Views.count(u.promptTokens() + u.completionTokens()));
        // In the prices' currency (the pipeline's `prices` name none); without prices the cost is not known.
        r.put(
                "cost",
                u.cost() == null ? "no prices" : u.cost().stripTrailingZeros().toPlainString());
        return r;
    }

    void experimentApi(Context ctx) {
        String pipeline = Params.segment(ctx, "pipeline");
        String experiment = Params.segment(ctx, "experiment");
        ctx.contentType("application/json")
                .result(Experiments.status(root(), pipeline, experiment).toJson());
    }

    void itemsApi(Context ctx) {
        String pipeline = Params.segment(ctx, "pipeline");
        String experiment = Params.segment(ctx, "experiment");
        ItemsQuery q = itemsQuery(ctx);
        Experiments.ItemPage page = Experiments.items(root(), pipeline, experiment, q.status(), q.after(), q.limit());
        ObjectNode o = Dashboard.JSON.createObjectNode();
        ArrayNode a = o.putArray("items");
        for (Experiments.ItemSummary i : page.items()) {
            a.addObject()
                    .put("item_id", i.itemId())
                    .put("status", i.status().name().toLowerCase(Locale.ROOT))
                    .put("parent_item_id", i.parentItemId())
                    .put("completed_steps", i.completedSteps())
                    .put("failures", i.failures())
                    .put("last_error_type", i.lastErrorType().orElse(null))
                    .put("last_step", i.lastStep().orElse(null));
        }
        o.put("next", page.next().orElse(null));
        Dashboard.json(ctx, o);
    }

    private ObjectNode item(Context ctx, String pipeline, String experiment) {
        String id =
                Params.query(ctx, "id").orElseThrow(() -> new InvalidInputException("give the item id as ?id=ITEM_ID"));
        return Experiments.item(root(), pipeline, experiment, id)
                .orElseThrow(() -> new NotFoundException(
                        "experiment " + pipeline + "/" + experiment + " has no item " + quote(id)));
    }

    private static String quote(String s) {
        return dev.vigilo.common.input.Names.quote(s);
    }

    void itemApi(Context ctx) {
        String pipeline = Params.segment(ctx, "pipeline");
        String experiment = Params.segment(ctx, "experiment");
        Dashboard.json(ctx, item(ctx, pipeline, experiment));
    }

    void itemPage(Context ctx) {
        String pipeline = Params.segment(ctx, "pipeline");
        String experiment = Params.segment(ctx, "experiment");
        ObjectNode item = item(ctx, pipeline, experiment);
        String base = "/datagen/" + pipeline + "/" + experiment;
        Map<String, Object> m = views.page("Item " + item.path("item_id").asText(), "datagen");
        m.put("pipeline", pipeline);
        m.put("experiment", experiment);
        m.put("experiment_href", base);
        m.put("item_id", item.path("item_id").asText());
        m.put("status", item.path("status").asText());
        m.put("root_item", item.path("root_item_id").asText(""));
        String parent = item.path("parent_item_id").asText("");
        m.put("parent", parent);
        if (!parent.isEmpty()) {
            m.put("parent_href", base + "/item?id=" + URLEncoder.encode(parent, StandardCharsets.UTF_8));
        }
        List<Map<String, Object>> fields = new ArrayList<>();
        item.path("fields")
                .fields()
                .forEachRemaining(f -> fields.add(
                        Map.of("name", f.getKey(), "value", Views.cut(RunPages.pretty(f.getValue()), SHOWN_CHARS))));
        m.put("fields", fields);
        List<Map<String, Object>> failures = new ArrayList<>();
        for (JsonNode f : item.path("failures")) {
            Map<String, Object> r = new LinkedHashMap<>();
            r.put("step", f.path("step").asText(""));
            r.put("attempt", f.path("attempt").asInt());
            r.put("error_type", f.path("error_type").asText(""));
            r.put("dump", Views.cut(f.path("error_dump").asText(""), SHOWN_CHARS));
            r.put("traceback", Views.cut(f.path("traceback").asText(""), SHOWN_CHARS));
            r.put("final", f.path("final_attempt").asBoolean());
            r.put("at", f.path("at").asText(""));
            failures.add(r);
        }
        m.put("failures", failures);
        m.put("has_failures", !failures.isEmpty());
        List<Map<String, Object>> history = new ArrayList<>();
        for (JsonNode e : item.path("history")) {
            Map<String, Object> r = new LinkedHashMap<>();
            r.put("seq", e.path("item_seq").asLong());
            r.put("type", e.path("event_type").asText());
            r.put("step", e.path("step").asText(""));
            r.put("attempt", e.path("attempt").isNull() ? "" : e.path("attempt").asText(""));
            r.put(
                    "iteration",
                    e.path("iteration").isNull() ? "" : e.path("iteration").asText(""));
            r.put("field", e.path("field").asText(""));
            r.put("value", e.has("value") ? Views.cut(RunPages.pretty(e.path("value")), 2_000) : "");
            r.put("detail", e.path("terminal").asText(e.path("error_type").asText("")));
            r.put("at", e.path("event_ts").asText(""));
            history.add(r);
        }
        m.put("history", history);
        List<Map<String, Object>> children = new ArrayList<>();
        for (JsonNode c : item.path("children")) {
            String cid = c.path("item_id").asText();
            children.add(Map.of(
                    "item_id",
                    cid,
                    "status",
                    c.path("status").asText(),
                    "href",
                    base + "/item?id=" + URLEncoder.encode(cid, StandardCharsets.UTF_8)));
        }
        m.put("children", children);
        m.put("has_children", !children.isEmpty());
        views.render(ctx, "item", m);
    }

    static JsonNode parse(String s) {
        try {
            return StoredJson.read(s);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }
}
