package dev.vigilo.web;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.common.input.Ids;
import dev.vigilo.common.input.Names;
import dev.vigilo.exec.GateDecision;
import dev.vigilo.exec.GateResult;
import dev.vigilo.exec.view.CaseResults;
import dev.vigilo.exec.view.RunComparison;
import dev.vigilo.stats.PairedDifference;
import io.javalin.http.Context;
import io.javalin.http.HttpStatus;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;

/**
 * Two runs compared ({@link RunComparison}, docs/execution.md "Comparison"): per gate, the pass rate of each and the
 * difference, then the flipped cases, one page at a time. Pages are keyset-paged by the comparison's own order (the
 * ordinal in run A for runs of one dataset, else the case id): a page reads both runs' receipts from the start up to
 * its last flip and one more, then stops, so it keeps at most a page of flips and its cost grows with how far into the
 * runs it goes, never beyond both runs once (plus, for runs of different datasets, the sort by id on disk). Its counts
 * cover the cases read; on the last page they are the whole comparison's.
 */
final class ComparePages {
    static final int FLIPS_PER_PAGE = 100;
    static final int MAX_LIMIT = 500;

    private final RunComparison comparison;
    private final RunNames names;
    private final CaseResults cases;
    private final Views views;

    ComparePages(DashboardSources.Databases sources, CaseResults cases, Views views) {
        this.comparison = new RunComparison(sources.placements(), sources.storage());
        this.names = new RunNames(new dev.vigilo.exec.view.RunCatalog(sources.placements()));
        this.cases = cases;
        this.views = views;
    }

    /**
     * Why each flipped case of a page ended as it did in each run ({@link RunPages#why}: the agent's error, or the
     * first evaluator that errored or failed with its reason), read from both runs' receipts at once: the comparison
     * itself keeps only each case's gate outcomes.
     */
    private record Reasons(Map<Long, CaseResults.ExecutedCase> a, Map<Long, CaseResults.ExecutedCase> b) {
        static Reasons of(CaseResults cases, UUID a, UUID b, List<RunComparison.Flip> flips) {
            return new Reasons(
                    cases.findAll(
                            a, flips.stream().map(RunComparison.Flip::ordinalA).toList()),
                    cases.findAll(
                            b, flips.stream().map(RunComparison.Flip::ordinalB).toList()));
        }

        String inA(RunComparison.Flip f) {
            return text(a.get(f.ordinalA()));
        }

        String inB(RunComparison.Flip f) {
            return text(b.get(f.ordinalB()));
        }

        private static String text(CaseResults.ExecutedCase c) {
            if (c == null) {
                return "";
            }
            String why = c.errorType()
                    .map(t -> "agent " + t + ": " + Views.cut(c.errorMessage().orElse(""), 200))
                    .orElseGet(() -> RunPages.why(c));
            return why.isEmpty() ? "every evaluator passed" : why;
        }
    }

    /** One page: the header, the flips after the cursor (at most {@code limit}), and whether more follow. */
    private record Page(
            RunComparison.Header header,
            List<RunComparison.Flip> flips,
            Optional<String> next,
            RunComparison.Summary summary) {}

    /**
     * Collects the flips after {@code after} and stops the comparison at the first flip beyond the page. The cursor's
     * form follows from the header: an ordinal of run A for one dataset, a case id otherwise.
     */
    private static final class Collector implements RunComparison.Listener {
        private final Optional<String> after;
        private final int limit;
        private RunComparison.Header header;
        private long afterOrdinal = -1;
        private final List<RunComparison.Flip> flips = new ArrayList<>();
        private boolean more;

        Collector(Optional<String> after, int limit) {
            this.after = after;
            this.limit = limit;
        }

        @Override
        public void start(RunComparison.Header h) {
            header = h;
            if (h.sameDataset() && after.isPresent()) {
                afterOrdinal = Params.number(after.get(), "after", 0, Long.MAX_VALUE);
            }
        }

        private boolean beyondCursor(RunComparison.Flip f) {
            if (after.isEmpty()) {
                return true;
            }
            return header.sameDataset()
                    ? f.ordinalA() > afterOrdinal
                    : f.caseId().compareTo(after.get()) > 0;
        }

        @Override
        public void flip(RunComparison.Flip f) {
            if (!beyondCursor(f)) {
                return;
            }
            if (flips.size() < limit) {
                flips.add(f);
            } else {
                more = true;
            }
        }

        @Override
        public boolean enough() {
            return more;
        }
    }

    private Page read(Context ctx, UUID a, UUID b) {
        Optional<String> after = Params.query(ctx, "after");
        int limit = (int) Params.number(ctx, "limit", 1, MAX_LIMIT, FLIPS_PER_PAGE);
        Collector c = new Collector(after, limit);
        RunComparison.Summary s = comparison.compare(a, b, c);
        Optional<String> next = Optional.empty();
        if (c.more) {
            RunComparison.Flip last = c.flips.get(c.flips.size() - 1);
            next = Optional.of(c.header.sameDataset() ? Long.toString(last.ordinalA()) : last.caseId());
        }
        return new Page(c.header, c.flips, next, s);
    }

    private static UUID other(Context ctx) {
        return Ids.uuid(ctx.pathParam("other"), "other", "run id", "see the runs page for run ids");
    }

    /** {@code /runs/A/compare?with=B} (the run page's form): to the comparison's own address. */
    void form(Context ctx) {
        UUID a = Params.runId(ctx);
        String with = Params.query(ctx, "with")
                .orElseThrow(() -> new InvalidInputException("give the run to compare with as ?with=RUN_ID"));
        UUID b = Ids.uuid(with.strip(), "with", "run id", "see the runs page for run ids");
        ctx.redirect("/runs/" + a + "/compare/" + b, HttpStatus.SEE_OTHER);
    }

    void page(Context ctx) {
        UUID a = Params.runId(ctx);
        UUID b = other(ctx);
        Page p = read(ctx, a, b);
        RunComparison.Header h = p.header();
        Map<String, Object> m =
                views.page(names.of(a) + " vs " + names.of(b) + " · run " + a + " compared with " + b, "runs");
        m.put("a", a.toString());
        m.put("b", b.toString());
        m.put("status_a", h.statusA());
        m.put("status_b", h.statusB());
        m.put("dataset_a", h.datasetA().toString());
        m.put("dataset_b", h.datasetB().toString());
        m.put("same_dataset", h.sameDataset());
        List<Map<String, Object>> gates = new ArrayList<>();
        for (RunComparison.GateComparison g : h.gates()) {
            Map<String, Object> r = new LinkedHashMap<>();
            r.put("name", g.name());
            r.put("rate_a", rate(g.a()));
            r.put("rate_b", rate(g.b()));
            r.put("decision_a", decision(g.a()));
            r.put("decision_b", decision(g.b()));
            r.put(
                    "difference",
                    g.difference()
                            .map(d -> String.format(Locale.ROOT, "%+.1f pts", d * 100))
                            .orElse("-"));
            r.put(
                    "direction",
                    g.difference()
                            .map(d -> d > 0 ? "up" : d < 0 ? "down" : "same")
                            .orElse("same"));
            Optional<RunComparison.GateSignificance> sig = p.summary().significance(g.name());
            if (sig.isPresent()) {
                RunComparison.GateSignificance x = sig.get();
                PairedDifference d = x.difference();
                r.put("has_significance", true);
                r.put("paired", x.paired());
                r.put("a_only", x.mcNemar().aOnly());
                r.put("b_only", x.mcNemar().bOnly());
                r.put("p_value", Views.pValue(x.mcNemar().pValue()));
                r.put("paired_difference", Views.points(d.difference()));
                r.put(
                        "difference_ci",
                        Views.confidence(d.confidence()) + " [" + Views.points(d.low()) + ", " + Views.points(d.high())
                                + "]");
                r.put("significant", x.significant() ? "significant" : "not significant");
                r.put("significance_class", x.significant() ? "significant" : "not-significant");
            } else {
                r.put("has_significance", false);
            }
            gates.add(r);
        }
        m.put("gates", gates);
        List<Map<String, Object>> flips = new ArrayList<>();
        Reasons reasons = Reasons.of(cases, a, b, p.flips());
        for (RunComparison.Flip f : p.flips()) {
            Map<String, Object> r = new LinkedHashMap<>();
            r.put("case_id", f.caseId());
            r.put("why_a", reasons.inA(f));
            r.put("why_b", reasons.inB(f));
            r.put("href_a", "/runs/" + a + "/cases/" + f.ordinalA());
            r.put("href_b", "/runs/" + b + "/cases/" + f.ordinalB());
            r.put("ordinal_a", f.ordinalA());
            r.put("ordinal_b", f.ordinalB());
            List<Map<String, Object>> changes = new ArrayList<>();
            for (RunComparison.GateChange c : f.changes()) {
                changes.add(Map.of(
                        "gate",
                        c.gate(),
                        "a",
                        c.a(),
                        "b",
                        c.b(),
                        "change",
                        c.change().wire()));
            }
            r.put("changes", changes);
            flips.add(r);
        }
        m.put("flips", flips);
        m.put("no_flips", flips.isEmpty());
        String base = "/runs/" + a + "/compare/" + b;
        p.next().ifPresent(n -> m.put("next", base + "?after=" + URLEncoder.encode(n, StandardCharsets.UTF_8)));
        if (Params.query(ctx, "after").isPresent()) {
            m.put("first", base);
            m.put("after", Names.printable(Params.query(ctx, "after").get()));
        }
        RunComparison.Summary s = p.summary();
        m.put("complete", s.complete());
        m.put("compared", s.compared());
        m.put("flipped", s.flipped());
        m.put("only_a", s.onlyInA());
        m.put("only_b", s.onlyInB());
        List<Map<String, Object>> kinds = new ArrayList<>();
        s.changes().forEach((k, v) -> kinds.add(Map.of("change", k.wire(), "count", v)));
        m.put("changes", kinds);
        views.render(ctx, "compare", m);
    }

    private static String rate(Optional<GateResult> g) {
        return g.map(r ->
                        String.format(Locale.ROOT, "%s (%d/%d)", Views.percent(r.passRate()), r.passed(), r.planned()))
                .orElse("-");
    }

    private static String decision(Optional<GateResult> g) {
        return g.map(r -> r.decision().map(GateDecision::spelling).orElse("pending"))
                .orElse("none");
    }

    void api(Context ctx) {
        UUID a = Params.runId(ctx);
        UUID b = other(ctx);
        Page p = read(ctx, a, b);
        RunComparison.Header h = p.header();
        ObjectNode o = Dashboard.JSON
                .createObjectNode()
                .put("run_a", a.toString())
                .put("run_b", b.toString())
                .put("status_a", h.statusA())
                .put("status_b", h.statusB())
                .put("dataset_a", h.datasetA().toString())
                .put("dataset_b", h.datasetB().toString())
                .put("same_dataset", h.sameDataset());
        ArrayNode gates = o.putArray("gates");
        for (RunComparison.GateComparison g : h.gates()) {
            ObjectNode n = gates.addObject().put("name", g.name());
            gate(n, "a", g.a());
            gate(n, "b", g.b());
            if (g.difference().isPresent()) {
                n.put("difference", g.difference().get());
            } else {
                n.putNull("difference");
            }
            RunComparison.GateSignificance.addTo(n, p.summary().significance(g.name()));
        }
        ArrayNode flips = o.putArray("flips");
        Reasons reasons = Reasons.of(cases, a, b, p.flips());
        for (RunComparison.Flip f : p.flips()) {
            ObjectNode n = flips.addObject()
                    .put("case_id", f.caseId())
                    .put("ordinal_a", f.ordinalA())
                    .put("ordinal_b", f.ordinalB())
                    .put("why_a", reasons.inA(f))
                    .put("why_b", reasons.inB(f));
            ArrayNode changes = n.putArray("changes");
            for (RunComparison.GateChange c : f.changes()) {
                changes.addObject()
                        .put("gate", c.gate())
                        .put("a", c.a())
                        .put("b", c.b())
                        .put("change", c.change().wire());
            }
        }
        o.put("next_after", p.next().orElse(null));
        RunComparison.Summary s = p.summary();
        ObjectNode sum = o.putObject("summary")
                .put("complete", s.complete())
                .put("compared", s.compared())
                .put("flipped", s.flipped());
        s.changes().forEach((k, v) -> sum.put(k.wire(), v));
        sum.put("only_in_a", s.onlyInA()).put("only_in_b", s.onlyInB());
        Dashboard.json(ctx, o);
    }

    private static void gate(ObjectNode n, String field, Optional<GateResult> g) {
        if (g.isEmpty()) {
            n.putNull(field);
            return;
        }
        GateResult r = g.get();
        ObjectNode x = n.putObject(field)
                .put("planned", r.planned())
                .put("passed", r.passed())
                .put("failed", r.failed())
                .put("errored", r.errored())
                .put("pass_rate", r.passRate());
        if (r.passedGate().isPresent()) {
            x.put("passed_gate", r.passedGate().get());
        } else {
            x.putNull("passed_gate");
        }
        x.put("decision", r.decision().map(GateDecision::spelling).orElse(null));
    }

    /**
     * {@code GET /runs/A/compare/B/flips.jsonl} and {@code .csv}: every flipped case of the comparison, streamed as
     * {@code vigilo run compare A B --flips [--format csv]} prints it (an attachment).
     */
    void flipsDownload(Context ctx) {
        UUID a = Params.runId(ctx);
        UUID b = other(ctx);
        boolean csv = ctx.path().endsWith(".csv");
        ctx.contentType(csv ? "text/csv; charset=utf-8" : "application/x-ndjson; charset=utf-8");
        ctx.header(
                "Content-Disposition",
                "attachment; filename=\"flips-" + a + "-" + b + (csv ? ".csv" : ".jsonl") + "\"");
        try (java.io.OutputStream out = ctx.outputStream()) {
            comparison.writeFlips(a, b, out, csv ? RunComparison.FlipFormat.CSV : RunComparison.FlipFormat.JSONL);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
