package dev.vigilo.web;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.common.input.Ids;
import dev.vigilo.exec.ExecutionStatus;
import dev.vigilo.exec.GateResult;
import dev.vigilo.exec.view.CaseResults;
import dev.vigilo.exec.view.ExecutionStatusReader;
import dev.vigilo.exec.view.RunCatalog;
import io.javalin.http.Context;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.UUID;

/**
 * The matrix (docs/web.md, "The matrix"): cases by runs for 2 to 8 runs of one dataset, a cell per case and run with
 * its outcome and score, filtered to every case, the cases whose outcome differs between runs, or the regressions
 * (cases the first run passed and a later one did not); above it each gate's pass rate per run with its difference from
 * the first run in points, and a link per run to its comparison with the first (McNemar and the paired difference).
 *
 * <p>Reads each run's matrix column ({@link ResultsExplorer#column}: outcomes and scores from its results explorer
 * index, cached apart); pages are keyset pages by ordinal.
 */
final class MatrixPages {
    static final int MIN_RUNS = 2;
    static final int MAX_RUNS = 8;
    static final int ROWS_PER_PAGE = 100;

    /** Which cases the matrix lists. */
    enum Show {
        ALL,
        DIFFERENT,
        REGRESSIONS;

        String spelling() {
            return name().toLowerCase(Locale.ROOT);
        }

        static Show parse(String text) {
            for (Show s : values()) {
                if (s.spelling().equals(text)) {
                    return s;
                }
            }
            throw new InvalidInputException("show " + dev.vigilo.common.input.Names.quote(text)
                    + " is not a choice; use all, different or" + " regressions");
        }
    }

    private final ResultsExplorer explorer;
    private final RunCatalog catalog;
    private final ExecutionStatusReader status;
    private final Views views;

    private final dev.vigilo.plan.RunGroups groups;

    MatrixPages(
            ResultsExplorer explorer,
            RunCatalog catalog,
            ExecutionStatusReader status,
            Views views,
            dev.vigilo.plan.RunGroups groups) {
        this.groups = groups;
        this.explorer = explorer;
        this.catalog = catalog;
        this.status = status;
        this.views = views;
    }

    private record Matrix(
            List<UUID> runs,
            List<RunCatalog.PlanIdentity> identities,
            List<ExecutionStatus> statuses,
            List<Map<String, Object>> rows,
            long nextAfter,
            Show show) {}

    private Matrix matrix(Context ctx) {
        List<String> given = new ArrayList<>();
        for (String v : ctx.queryParams("run")) {
            for (String part : v.split(",")) {
                if (!part.isBlank()) {
                    given.add(part.strip());
                }
            }
        }
        LinkedHashSet<UUID> runs = new LinkedHashSet<>();
        for (String g : given) {
            runs.add(Ids.uuid(g, "run", "run id", "see the runs page for their ids"));
        }
        if (runs.size() < MIN_RUNS || runs.size() > MAX_RUNS) {
            throw new InvalidInputException("a matrix shows " + MIN_RUNS + " to " + MAX_RUNS + " different runs; "
                    + runs.size() + " given (name each with run=RUN_ID)");
        }
        List<UUID> ids = List.copyOf(runs);
        List<RunCatalog.PlanIdentity> identities = new ArrayList<>();
        for (UUID id : ids) {
            RunCatalog.PlanIdentity i = catalog.identity(id);
            if (!identities.isEmpty()
                    && !i.datasetUploadId().equals(identities.get(0).datasetUploadId())) {
                throw new InvalidInputException("run " + id + " is of dataset " + i.datasetUploadId() + ", run "
                        + ids.get(0) + " of " + identities.get(0).datasetUploadId()
                        + "; a matrix shows runs of one dataset (compare two runs of different datasets on the"
                        + " compare page)");
            }
            identities.add(i);
        }
        Show show = Params.query(ctx, "show").map(Show::parse).orElse(Show.ALL);
        long after = Params.number(ctx, "after", -1, Long.MAX_VALUE, -1);
        int limit = (int) Params.number(ctx, "limit", 1, CaseResults.MAX_LIMIT, ROWS_PER_PAGE);
        // Each run's status read once: for the page's gate rates and as the version of its cached column.
        List<ExecutionStatus> statuses = new ArrayList<>();
        List<CaseIndex.Column> indexes = new ArrayList<>();
        for (UUID id : ids) {
            ExecutionStatus current = status.status(id);
            statuses.add(current);
            indexes.add(explorer.column(id, current));
        }
        // Walk every run's positions in ordinal order together (each index holds its executed cases by ordinal).
        int[] at = new int[ids.size()];
        for (int r = 0; r < ids.size(); r++) {
            at[r] = start(indexes.get(r), after);
        }
        List<Map<String, Object>> rows = new ArrayList<>();
        long next = -1;
        while (true) {
            long ordinal = Long.MAX_VALUE;
            for (int r = 0; r < ids.size(); r++) {
                if (at[r] < indexes.get(r).size()) {
                    ordinal = Math.min(ordinal, indexes.get(r).ordinalAt(at[r]));
                }
            }
            if (ordinal == Long.MAX_VALUE) {
                break;
            }
            OptionalInt[] cell = new OptionalInt[ids.size()];
            String caseId = null;
            for (int r = 0; r < ids.size(); r++) {
                CaseIndex.Column x = indexes.get(r);
                if (at[r] < x.size() && x.ordinalAt(at[r]) == ordinal) {
                    cell[r] = OptionalInt.of(at[r]);
                    caseId = x.idAt(at[r]);
                    at[r]++;
                } else {
                    cell[r] = OptionalInt.empty();
                }
            }
            if (!shows(show, indexes, cell)) {
                continue;
            }
            if (rows.size() == limit) {
                next = (long) rows.get(rows.size() - 1).get("ordinal");
                break;
            }
            rows.add(row(ids, indexes, cell, ordinal, caseId));
        }
        return new Matrix(ids, identities, statuses, rows, next, show);
    }

    /** The first position after ordinal {@code after}. */
    private static int start(CaseIndex.Column index, long after) {
        int lo = 0;
        int hi = index.size();
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (index.ordinalAt(mid) <= after) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }

    /**
     * Whether a row is listed: every row; rows whose executed outcomes differ (a case some run has not executed is not
     * a difference); rows the first run passed and a later run failed or errored.
     */
    private static boolean shows(Show show, List<CaseIndex.Column> indexes, OptionalInt[] cell) {
        if (show == Show.ALL) {
            return true;
        }
        CaseResults.Outcome first = null;
        boolean differ = false;
        for (int r = 0; r < cell.length; r++) {
            if (cell[r].isEmpty()) {
                continue;
            }
            CaseResults.Outcome o = indexes.get(r).outcomeAt(cell[r].getAsInt());
            if (first == null) {
                first = o;
            } else if (o != first) {
                differ = true;
            }
        }
        if (show == Show.DIFFERENT) {
            return differ;
        }
        if (cell[0].isEmpty() || indexes.get(0).outcomeAt(cell[0].getAsInt()) != CaseResults.Outcome.PASSED) {
            return false;
        }
        for (int r = 1; r < cell.length; r++) {
            if (cell[r].isPresent() && indexes.get(r).outcomeAt(cell[r].getAsInt()) != CaseResults.Outcome.PASSED) {
                return true;
            }
        }
        return false;
    }

    private static Map<String, Object> row(
            List<UUID> ids, List<CaseIndex.Column> indexes, OptionalInt[] cell, long ordinal, String caseId) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("ordinal", ordinal);
        m.put("case_id", caseId);
        List<Map<String, Object>> cells = new ArrayList<>();
        for (int r = 0; r < ids.size(); r++) {
            Map<String, Object> c = new LinkedHashMap<>();
            if (cell[r].isPresent()) {
                int p = cell[r].getAsInt();
                c.put("outcome", indexes.get(r).outcomeAt(p).spelling());
                double score = indexes.get(r).scoreAt(p);
                c.put("score", Double.isNaN(score) ? "" : Scoring.score(Optional.of(score)));
                c.put("score_value", Double.isNaN(score) ? null : score);
                c.put("href", "/runs/" + ids.get(r) + "/cases/" + ordinal);
            } else {
                c.put("outcome", "not run");
                c.put("missing", true);
            }
            cells.add(c);
        }
        m.put("cells", cells);
        return m;
    }

    private static String href(List<UUID> runs, Show show, long after) {
        StringBuilder b = new StringBuilder("/matrix?");
        for (UUID r : runs) {
            b.append("run=").append(r).append('&');
        }
        b.append("show=").append(show.spelling());
        if (after >= 0) {
            b.append("&after=").append(after);
        }
        return b.toString();
    }

    /** {@code GET /matrix?run=A&run=B...&show=all|different|regressions&after=}. */
    void page(Context ctx) {
        Matrix x = matrix(ctx);
        // The title leads with the runs' names (the first three; "+N" for the rest).
        List<String> names = x.identities().stream()
                .map(i -> i.runIdentity().map(RunCatalog.Identity::name).orElse("(unnamed)"))
                .toList();
        String lead = String.join(" vs ", names.subList(0, Math.min(3, names.size())))
                + (names.size() > 3 ? " +" + (names.size() - 3) : "");
        Map<String, Object> m = views.page(lead + " · matrix of " + x.runs().size() + " runs", "runs");
        List<Map<String, Object>> runs = new ArrayList<>();
        for (int r = 0; r < x.runs().size(); r++) {
            RunCatalog.PlanIdentity i = x.identities().get(r);
            Map<String, Object> run = new LinkedHashMap<>();
            run.put("id", x.runs().get(r).toString());
            run.put("short_id", x.runs().get(r).toString().substring(0, 8));
            run.put("name", i.runIdentity().map(RunCatalog.Identity::name).orElse("(unnamed)"));
            run.put("agent", i.runIdentity().map(RunCatalog.Identity::agent).orElse(""));
            run.put("status", i.status());
            run.put("verdict", i.verdict().orElse(""));
            if (r > 0) {
                run.put(
                        "compare",
                        "/runs/" + x.runs().get(0) + "/compare/" + x.runs().get(r));
            }
            runs.add(run);
        }
        // The runs of one run group (every one a member of the same group): the page is the group's, each run headed by
        // its agent's name.
        Map<UUID, dev.vigilo.plan.RunGroups.Membership> member = groups.membershipOf(x.runs());
        if (member.size() == x.runs().size()
                && member.values().stream()
                                .map(dev.vigilo.plan.RunGroups.Membership::groupId)
                                .distinct()
                                .count()
                        == 1) {
            dev.vigilo.plan.RunGroups.Membership first = member.get(x.runs().get(0));
            m.put("group", first.groupName());
            m.put("group_id", first.groupId().toString());
            m.put(
                    "title",
                    "Group " + first.groupName() + " · matrix of " + x.runs().size() + " runs");
            for (int r = 0; r < runs.size(); r++) {
                runs.get(r).put("agent_name", member.get(x.runs().get(r)).agentName());
            }
        }
        m.put("runs", runs);
        m.put("gates", gates(x));
        m.put("rows", x.rows());
        m.put("empty", x.rows().isEmpty());
        m.put("dataset", x.identities().get(0).datasetName());
        List<Map<String, Object>> tabs = new ArrayList<>();
        for (Show s : Show.values()) {
            tabs.add(Map.of("label", s.spelling(), "href", href(x.runs(), s, -1), "current", s == x.show()));
        }
        m.put("tabs", tabs);
        if (x.nextAfter() >= 0) {
            m.put("next", href(x.runs(), x.show(), x.nextAfter()));
        }
        if (Params.query(ctx, "after").isPresent()) {
            m.put("first", href(x.runs(), x.show(), -1));
        }
        views.render(ctx, "matrix", m);
    }

    /** Per gate (the first run's gates, in order), each run's pass rate and its difference from the first run's. */
    private static List<Map<String, Object>> gates(Matrix x) {
        List<Map<String, Object>> out = new ArrayList<>();
        for (GateResult g : x.statuses().get(0).gates()) {
            Map<String, Object> row = new LinkedHashMap<>();
            row.put("name", g.name());
            List<Map<String, Object>> cells = new ArrayList<>();
            double base = rate(g);
            for (ExecutionStatus s : x.statuses()) {
                Optional<GateResult> same = s.gates().stream()
                        .filter(o -> o.name().equals(g.name()))
                        .findFirst();
                Map<String, Object> c = new LinkedHashMap<>();
                if (same.isEmpty() || Double.isNaN(rate(same.get()))) {
                    c.put("rate", "—");
                    c.put("delta", "");
                } else {
                    double rate = rate(same.get());
                    c.put("rate", Views.percent(rate));
                    c.put("delta", s == x.statuses().get(0) || Double.isNaN(base) ? "" : Views.points(rate - base));
                    c.put(
                            "decision",
                            same.get()
                                    .decision()
                                    .map(d -> d.name().toLowerCase(Locale.ROOT))
                                    .orElse(""));
                }
                cells.add(c);
            }
            row.put("cells", cells);
            out.add(row);
        }
        return out;
    }

    private static double rate(GateResult g) {
        long executed = g.passed() + g.failed() + g.errored();
        return executed == 0 ? Double.NaN : (double) g.passed() / executed;
    }

    /** {@code GET /api/matrix?...}: the same rows as JSON. */
    void api(Context ctx) {
        Matrix x = matrix(ctx);
        ObjectNode o = Dashboard.JSON.createObjectNode();
        ArrayNode runs = o.putArray("runs");
        x.runs().forEach(r -> runs.add(r.toString()));
        o.put("show", x.show().spelling());
        ArrayNode gates = o.putArray("gates");
        for (Map<String, Object> g : gates(x)) {
            ObjectNode gn = gates.addObject().put("name", (String) g.get("name"));
            ArrayNode rates = gn.putArray("pass_rates");
            @SuppressWarnings("unchecked")
            List<Map<String, Object>> cells = (List<Map<String, Object>>) g.get("cells");
            cells.forEach(c -> rates.add((String) c.get("rate")));
        }
        ArrayNode rows = o.putArray("rows");
        for (Map<String, Object> r : x.rows()) {
            ObjectNode rn =
                    rows.addObject().put("ordinal", (Long) r.get("ordinal")).put("case_id", (String) r.get("case_id"));
            ArrayNode cells = rn.putArray("cells");
            @SuppressWarnings("unchecked")
            List<Map<String, Object>> cs = (List<Map<String, Object>>) r.get("cells");
            for (Map<String, Object> c : cs) {
                ObjectNode cn = cells.addObject().put("outcome", (String) c.get("outcome"));
                Object score = c.get("score_value");
                if (score == null) {
                    cn.putNull("score");
                } else {
                    cn.put("score", (Double) score);
                }
            }
        }
        if (x.nextAfter() >= 0) {
            o.put("next_after", x.nextAfter());
        } else {
            o.putNull("next_after");
        }
        Dashboard.json(ctx, o);
    }
}
