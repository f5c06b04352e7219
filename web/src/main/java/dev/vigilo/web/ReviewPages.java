package dev.vigilo.web;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.vigilo.exec.GateDecision;
import dev.vigilo.exec.GateResult;
import dev.vigilo.exec.review.RunReviews;
import dev.vigilo.exec.view.ExecutionStatusReader;
import dev.vigilo.stats.ProportionInterval;
import io.javalin.http.Context;
import io.javalin.http.HttpStatus;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;

/**
 * Human review on the dashboard (docs/web.md, "Human review"; docs/execution.md, "Human review"): the review form and
 * history on a case page, the reviewed gate table beside the machine one on a run page, and their routes: {@code
 * POST /runs/RUN/cases/ORDINAL/review} (the form), {@code POST /api/runs/RUN/cases/ORDINAL/review} and {@code GET
 * /api/runs/RUN/reviews}. Every POST passes the same access checks as cancel (token, or CSRF token with this origin),
 * applied before any route. Reads and writes through exec's {@link RunReviews} only.
 */
final class ReviewPages {
    private final RunReviews reviews;
    private final ExecutionStatusReader status;

    ReviewPages(DashboardSources.Databases sources) {
        this.reviews = new RunReviews(sources.placements(), sources.storage());
        this.status = new ExecutionStatusReader(sources.placements());
    }

    /** The case page's review section: the form (for an executed case) and the case's override history. */
    void putCase(Map<String, Object> m, UUID id, long ordinal, boolean executed) {
        List<RunReviews.CaseOverride> history = reviews.forCase(id, ordinal);
        List<Map<String, Object>> rows = new ArrayList<>();
        for (RunReviews.CaseOverride o : history) {
            rows.add(row(o));
        }
        m.put("reviews", rows);
        m.put("has_reviews", !rows.isEmpty());
        m.put("reviewable", executed);
        m.put("review_action", "/runs/" + id + "/cases/" + ordinal + "/review");
        m.put("review_cli", "vigilo run review " + id + " " + ordinal + " --outcome pass|fail --note TEXT");
        if (!history.isEmpty()) {
            RunReviews.CaseOverride last = history.get(history.size() - 1);
            m.put("review_current", row(last));
        }
    }

    private static Map<String, Object> row(RunReviews.CaseOverride o) {
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("seq", o.seq());
        r.put("outcome", o.outcome().spelling());
        r.put("badge", o.outcome() == RunReviews.Verdict.PASS ? "passed" : "failed");
        r.put("original", o.original());
        r.put("reviewer", o.reviewer());
        r.put("note", o.note());
        r.put("at", Views.time(o.at()));
        r.put("current", o.current());
        r.put("stale", o.current() && o.stale());
        r.put("superseded", !o.current());
        r.put("record_key", o.recordKey());
        return r;
    }

    /** The run page's reviewed gate table, when the run has overrides: the recomputed rows and verdict. */
    void putGates(Map<String, Object> m, UUID id, List<GateResult> machine, boolean finished) {
        Optional<RunReviews.Reviewed> r = machine.isEmpty() ? Optional.empty() : reviews.gates(id, machine);
        m.put("has_reviewed", r.isPresent());
        if (r.isEmpty()) {
            return;
        }
        List<Map<String, Object>> rows = new ArrayList<>();
        for (int i = 0; i < r.get().reviewed().size(); i++) {
            GateResult g = r.get().reviewed().get(i);
            GateResult was = machine.get(i);
            Map<String, Object> x = new LinkedHashMap<>();
            x.put("name", g.name());
            x.put("planned", Views.count(g.planned()));
            x.put("passed", Views.count(g.passed()));
            x.put("failed", Views.count(g.failed()));
            x.put("errored", Views.count(g.errored()));
            x.put("pass_rate", Views.percent(g.passRate()));
            x.put("machine_pass_rate", Views.percent(was.passRate()));
            ProportionInterval ci = g.interval();
            x.put("ci", "[" + Views.percent(ci.low()) + ", " + Views.percent(ci.high()) + "]");
            x.put("confidence", Views.confidence(g.confidence()));
            x.put("decision", g.decision().map(GateDecision::spelling).orElse(finished ? "none" : "pending"));
            x.put("machine_decision", was.decision().map(GateDecision::spelling).orElse(finished ? "none" : "pending"));
            rows.add(x);
        }
        m.put("reviewed_gates", rows);
        m.put("reviewed_applied", r.get().applied());
        m.put("reviewed_stale", r.get().stale() > 0 ? r.get().stale() : null);
        m.put(
                "reviewed_verdict",
                r.get().reviewedVerdict().map(v -> v.spelling()).orElse("not yet"));
        m.put("reviews_cli", "vigilo run reviews " + id);
    }

    /** {@code POST /runs/RUN/cases/ORDINAL/review}: records the form's override, then shows the case again. */
    void form(Context ctx) {
        Params.CaseRef ref = Params.caseRef(ctx);
        record(ctx, ref);
        ctx.redirect(ref.path() + "#review", HttpStatus.SEE_OTHER);
    }

    /**
     * {@code POST /api/runs/RUN/cases/ORDINAL/review} with form fields {@code outcome} ({@code pass|fail}), {@code
     * note} and {@code reviewer}: the override recorded, as JSON.
     */
    void api(Context ctx) {
        Dashboard.json(ctx, json(record(ctx, Params.caseRef(ctx))));
    }

    private RunReviews.CaseOverride record(Context ctx, Params.CaseRef ref) {
        // The dashboard's token identifies no person: the reviewer names themself (required, like the note).
        return reviews.record(
                ref.run(),
                ref.ordinal(),
                RunReviews.Verdict.parse(String.valueOf(ctx.formParam("outcome"))),
                ctx.formParam("reviewer"),
                ctx.formParam("note"));
    }

    /** {@code GET /api/runs/RUN/reviews}: every override (history included) and the reviewed gate table. */
    void listApi(Context ctx) {
        UUID id = Params.runId(ctx);
        List<GateResult> machine = status.status(id).gates();
        ObjectNode o = Dashboard.JSON.createObjectNode().put("run_id", id.toString());
        ArrayNode a = o.putArray("overrides");
        reviews.list(id).forEach(x -> a.add(json(x)));
        Optional<RunReviews.Reviewed> r = machine.isEmpty() ? Optional.empty() : reviews.gates(id, machine);
        if (r.isEmpty()) {
            o.putNull("reviewed");
        } else {
            ObjectNode rv = o.putObject("reviewed")
                    .put("applied", r.get().applied())
                    .put("stale", r.get().stale())
                    .put(
                            "verdict",
                            r.get().reviewedVerdict().map(v -> v.spelling()).orElse(null));
            ArrayNode gates = rv.putArray("gates");
            for (GateResult g : r.get().reviewed()) {
                gates.addObject()
                        .put("name", g.name())
                        .put("planned", g.planned())
                        .put("passed", g.passed())
                        .put("failed", g.failed())
                        .put("errored", g.errored())
                        .put("pass_rate", g.passRate())
                        .put("ci_low", g.interval().low())
                        .put("ci_high", g.interval().high())
                        .put(
                                "decision",
                                g.decision().map(GateDecision::spelling).orElse(null));
            }
        }
        Dashboard.json(ctx, o);
    }

    private static ObjectNode json(RunReviews.CaseOverride o) {
        ObjectNode n = Dashboard.JSON
                .createObjectNode()
                .put("seq", o.seq())
                .put("ordinal", o.ordinal())
                .put("case_id", o.caseId())
                .put("outcome", o.outcome().spelling())
                .put("original", o.original())
                .put("reviewer", o.reviewer())
                .put("note", o.note())
                .put("at", o.at().toString())
                .put("current", o.current())
                .put("stale", o.stale())
                .put("record_key", o.recordKey())
                .put("record_sha256", o.recordSha256());
        if (o.supersedes().isPresent()) {
            n.put("supersedes", o.supersedes().getAsLong());
        } else {
            n.putNull("supersedes");
        }
        return n;
    }

    void close() {
        reviews.close();
    }
}
