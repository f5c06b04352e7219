package dev.vigilo.web;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.common.input.Ids;
import dev.vigilo.dataset.DatasetCatalog;
import dev.vigilo.dataset.DatasetEntry;
import dev.vigilo.dataset.DatasetOrigin;
import dev.vigilo.dataset.DatasetReader;
import dev.vigilo.dataset.StoredCase;
import io.javalin.http.Context;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;

/** The datasets pages and their API: the catalog (paged) and one dataset with a page of its cases (a range read). */
final class DatasetPages {
    static final int PER_PAGE = 50;
    static final int CASES_PER_PAGE = 50;
    static final int MAX_CASES = 500;
    static final int SHOWN_CHARS = 300;

    private final Stores stores;
    private final Views views;
    private final DatasetCatalog catalog;

    DatasetPages(DashboardSources.Databases sources, Stores stores, Views views) {
        this.stores = stores;
        this.views = views;
        this.catalog = new DatasetCatalog(sources.control());
    }

    private List<DatasetEntry> page(Context ctx) {
        Optional<DatasetEntry> after = Params.query(ctx, "after")
                .map(a -> Ids.uuid(a, "after", "upload id", "start from the first page"))
                .map(catalog::get);
        int limit = (int) Params.number(ctx, "limit", 1, 1000, PER_PAGE);
        return catalog.page(after, limit);
    }

    private static Map<String, Object> row(DatasetEntry e) {
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("id", e.uploadId().toString());
        r.put("name", e.name());
        r.put("cases", e.caseCount());
        r.put("bytes", e.sourceBytes());
        r.put("created", Views.time(e.createdAt()));
        r.put("source_sha", e.sourceSha256().toHex());
        r.put("membership", e.membershipUuid().toString());
        r.put("storage", e.storage().value());
        r.put("index_root", e.indexRoot().key().value());
        r.put("index_levels", e.indexLevels());
        return r;
    }

    void listPage(Context ctx) {
        int limit = (int) Params.number(ctx, "limit", 1, 1000, PER_PAGE);
        List<DatasetEntry> page = page(ctx);
        Map<String, Object> m = views.page("Datasets", "datasets");
        List<Map<String, Object>> rows = new ArrayList<>();
        page.forEach(e -> rows.add(row(e)));
        m.put("datasets", rows);
        m.put("empty", rows.isEmpty());
        if (page.size() == limit) {
            m.put("next", "/datasets?after=" + page.get(page.size() - 1).uploadId());
        }
        views.render(ctx, "datasets", m);
    }

    void listApi(Context ctx) {
        int limit = (int) Params.number(ctx, "limit", 1, 1000, PER_PAGE);
        List<DatasetEntry> page = page(ctx);
        ObjectNode o = Dashboard.JSON.createObjectNode();
        ArrayNode a = o.putArray("datasets");
        page.forEach(e -> a.add(entryJson(e)));
        o.put(
                "next",
                page.size() == limit ? page.get(page.size() - 1).uploadId().toString() : null);
        Dashboard.json(ctx, o);
    }

    private static ObjectNode entryJson(DatasetEntry e) {
        ObjectNode n = Dashboard.JSON
                .createObjectNode()
                .put("upload_id", e.uploadId().toString())
                .put("name", e.name())
                .put("case_count", e.caseCount())
                .put("source_hash", e.sourceSha256().toHex())
                .put("source_bytes", e.sourceBytes())
                .put("membership_uuid", e.membershipUuid().toString())
                .put("storage", e.storage().value())
                .put("index_levels", e.indexLevels())
                .put("created_at", e.createdAt().toString());
        n.putObject("index_root")
                .put("key", e.indexRoot().key().value())
                .put("length", e.indexRoot().length())
                .put("sha256", e.indexRoot().sha256().toHex());
        return n;
    }

    private record Range(long from, int count) {}

    private static Range range(Context ctx, DatasetEntry e) {
        long from = Params.number(ctx, "from", 0, Long.MAX_VALUE, 0);
        int count = (int) Params.number(ctx, "limit", 1, MAX_CASES, CASES_PER_PAGE);
        if (from >= e.caseCount()) {
            throw new InvalidInputException("from " + from + " is beyond the dataset's " + e.caseCount() + " cases");
        }
        return new Range(from, (int) Math.min(count, e.caseCount() - from));
    }

    private List<StoredCase> cases(DatasetEntry e, Range r) {
        List<StoredCase> out = new ArrayList<>(r.count());
        DatasetReader.open(e, stores.forBinding(e.storage())).forEachCaseInRange(r.from(), r.count(), out::add);
        return out;
    }

    void datasetPage(Context ctx) {
        UUID id = Params.uploadId(ctx);
        DatasetEntry e = catalog.get(id);
        Range r = range(ctx, e);
        Map<String, Object> m = views.page("Dataset " + e.name(), "datasets");
        m.putAll(row(e));
        catalog.origin(id).ifPresent(o -> m.put("origin", origin(o)));
        List<Map<String, Object>> rows = new ArrayList<>();
        for (StoredCase c : cases(e, r)) {
            JsonNode j = StoredJson.datasetCase(c.caseJson());
            Map<String, Object> row = new LinkedHashMap<>();
            row.put("ordinal", c.ordinal());
            row.put("case_id", c.id());
            row.put("group", c.fields().group().orElse(""));
            row.put("tags", String.join(", ", c.fields().tags()));
            row.put("input", Views.cut(RunPages.pretty(StoredJson.input(j)), SHOWN_CHARS));
            row.put("expected", j.has("expected") ? Views.cut(RunPages.pretty(j.path("expected")), SHOWN_CHARS) : "");
            rows.add(row);
        }
        m.put("rows", rows);
        m.put("from", r.from());
        m.put("to", r.from() + r.count() - 1);
        if (r.from() + r.count() < e.caseCount()) {
            m.put("next", "/datasets/" + id + "?from=" + (r.from() + r.count()));
        }
        if (r.from() > 0) {
            m.put("prev", "/datasets/" + id + "?from=" + Math.max(0, r.from() - CASES_PER_PAGE));
        }
        views.render(ctx, "dataset", m);
    }

    /** A dataset's origin for the page: the experiment (linked), the log version read and the map. */
    private static Map<String, Object> origin(DatasetOrigin o) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("pipeline", o.pipeline());
        m.put("experiment", o.experiment());
        m.put(
                "href",
                "/datagen/"
                        + URLEncoder.encode(o.pipeline(), StandardCharsets.UTF_8)
                                .replace("+", "%20") + "/"
                        + URLEncoder.encode(o.experiment(), StandardCharsets.UTF_8)
                                .replace("+", "%20"));
        m.put("log_version", o.logVersion());
        m.put("items", Views.count(o.items()));
        m.put("map", o.map().toString());
        m.put("root", o.durableRoot());
        return m;
    }

    void datasetApi(Context ctx) {
        UUID id = Params.uploadId(ctx);
        ObjectNode o = entryJson(catalog.get(id));
        catalog.origin(id)
                .ifPresent(origin -> o.putObject("origin")
                        .put("kind", "datagen")
                        .put("durable_root", origin.durableRoot())
                        .put("pipeline", origin.pipeline())
                        .put("experiment", origin.experiment())
                        .put("log_version", origin.logVersion())
                        .put("items", origin.items())
                        .put("map", origin.map().toString()));
        Dashboard.json(ctx, o);
    }

    void casesApi(Context ctx) {
        DatasetEntry e = catalog.get(Params.uploadId(ctx));
        Range r = range(ctx, e);
        ObjectNode o = Dashboard.JSON
                .createObjectNode()
                .put("upload_id", e.uploadId().toString())
                .put("from", r.from());
        ArrayNode a = o.putArray("cases");
        for (StoredCase c : cases(e, r)) {
            a.addObject()
                    .put("ordinal", c.ordinal())
                    .put("sha256", c.sha256().toHex())
                    .set("case", StoredJson.datasetCase(c.caseJson()));
        }
        long next = r.from() + r.count();
        if (next < e.caseCount()) {
            o.put("next_from", next);
        } else {
            o.putNull("next_from");
        }
        Dashboard.json(ctx, o);
    }
}
