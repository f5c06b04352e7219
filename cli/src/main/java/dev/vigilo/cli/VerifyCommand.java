package dev.vigilo.cli;

import dev.vigilo.common.input.Names;
import dev.vigilo.exec.GateDecision;
import dev.vigilo.exec.GateResult;
import dev.vigilo.exec.audit.RunVerifier;
import dev.vigilo.plan.Profile;
import dev.vigilo.stats.ProportionInterval;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** {@code vigilo verify RUN_ID [--json]}: exit 0 when the run checks out, 1 with the first damage otherwise. */
@Command(
        name = "verify",
        mixinStandardHelpOptions = true,
        description = {
            "Re-read a settled run end to end and check it against its own records: the dataset (catalog identity,"
                    + " index, every case), the published plan (manifest, configuration, gates, every chunk), every"
                    + " receipt, output and transcript (length and SHA-256), and the settlement and verdict"
                    + " recomputed from the receipts and the frozen gate counts.",
            "Exit 0 when everything matches, 1 with the first damaged object or mismatching figure."
        })
final class VerifyCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    IdParameters.Run runId;

    @Mixin
    JsonOption json;

    @Override
    public Integer call() {
        return Verification.run(spec, json, connections -> {
            RunVerifier.Report r = new RunVerifier(connections.placements(), connections.storage()).verify(runId.id());
            if (!r.intact()) {
                return Verification.damaged(
                        json(r),
                        Names.printable(r.damagedKey()
                                .map(k -> "DAMAGED: " + k)
                                .orElse("MISMATCH: " + r.problem().orElseThrow())),
                        r.problem().orElseThrow());
            }
            RunVerifier.Checked c = r.checked();
            List<String> text = new ArrayList<>();
            text.add(String.format(
                    "intact: run %s %s%s: %d cases, %d chunks, %d receipts, %d outputs and %d transcripts"
                            + " verified; settlement recomputed:",
                    r.runId(),
                    r.status(),
                    r.verdict().map(v -> ", verdict " + v).orElse(""),
                    c.datasetCases(),
                    c.chunks(),
                    c.receipts(),
                    c.outputs(),
                    c.transcripts()));
            for (GateResult g : r.gates()) {
                text.add(String.format(
                        Locale.ROOT,
                        "  gate %s: %d passed, %d failed, %d errored of %d planned (%.1f%%, %s CI %s, minimum %.1f%%,"
                                + " decided on the %s): %s",
                        Names.printable(g.name()),
                        g.passed(),
                        g.failed(),
                        g.errored(),
                        g.planned(),
                        g.passRate() * 100,
                        ExecutionView.level(g),
                        ExecutionView.interval(g),
                        g.minPassRate() * 100,
                        g.decide() == Profile.Decide.POINT ? "point rate" : "bound",
                        g.decision().orElseThrow().spelling()));
            }
            if (r.reviews().overrides() > 0) {
                text.add(String.format(
                        "  review: %d override records verified (%d in force)%s",
                        r.reviews().overrides(),
                        r.reviews().current(),
                        r.reviews().stale().isEmpty() ? "" : "; stale (not applied):"));
                r.reviews().stale().forEach(line -> text.add("    " + Names.printable(line)));
            }
            if (c.casesWithoutTranscripts() > 0) {
                text.add(String.format(
                        "  %d cases have no transcript (receipts written before transcripts were recorded)",
                        c.casesWithoutTranscripts()));
            }
            return Verification.intact(json(r), text);
        });
    }

    private static Map<String, Object> json(RunVerifier.Report r) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("run_id", r.runId().toString());
        m.put("intact", r.intact());
        m.put("status", r.status());
        m.put("verdict", r.verdict().orElse(null));
        RunVerifier.Checked c = r.checked();
        Map<String, Object> checked = new LinkedHashMap<>();
        checked.put("dataset_cases", c.datasetCases());
        checked.put("case_files", c.caseFiles());
        checked.put("index_documents", c.indexDocuments());
        checked.put("chunks", c.chunks());
        checked.put("receipts", c.receipts());
        checked.put("outputs", c.outputs());
        checked.put("transcripts", c.transcripts());
        checked.put("cases_without_transcripts", c.casesWithoutTranscripts());
        m.put("checked", checked);
        Map<String, Object> reviews = new LinkedHashMap<>();
        reviews.put("overrides", r.reviews().overrides());
        reviews.put("current", r.reviews().current());
        reviews.put("stale", r.reviews().stale());
        m.put("reviews", reviews);
        m.put("damaged_key", r.damagedKey().orElse(null));
        m.put("problem", r.problem().orElse(null));
        List<Map<String, Object>> gates = new ArrayList<>();
        for (GateResult g : r.gates()) {
            Map<String, Object> x = new LinkedHashMap<>();
            x.put("name", g.name());
            x.put("planned", g.planned());
            x.put("passed", g.passed());
            x.put("failed", g.failed());
            x.put("errored", g.errored());
            x.put("pass_rate", g.passRate());
            x.put("min_pass_rate", g.minPassRate());
            x.put("passed_gate", g.passedGate().orElse(null));
            ProportionInterval i = g.interval();
            x.put("stderr", i.stderr());
            x.put("ci_low", i.low());
            x.put("ci_high", i.high());
            x.put("confidence", g.confidence().level());
            x.put("decide", g.decide().wire());
            x.put("decision", g.decision().map(GateDecision::spelling).orElse(null));
            g.casesToDecide().ifPresent(n -> x.put("cases_to_decide", n));
            if (g.passAtK().isPresent()) {
                x.put("pass_at_k", g.passAtKByK());
            }
            gates.add(x);
        }
        m.put("gates", gates);
        return m;
    }
}
