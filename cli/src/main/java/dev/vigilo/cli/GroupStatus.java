package dev.vigilo.cli;

import dev.vigilo.common.errors.NotFoundException;
import dev.vigilo.exec.ExecutionStatus;
import dev.vigilo.exec.GateResult;
import dev.vigilo.exec.UsageSummary;
import dev.vigilo.exec.view.ExecutionStatusReader;
import dev.vigilo.plan.RunGroups;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * {@code vigilo run status GROUP}: one line per member of a run group (docs/cli.md): its agent name, run, status,
 * verdict, each gate's pass rate and its cost; {@code --json} the same as a document. A member whose run an
 * interrupted {@code run create --agents} did not create yet reads {@code not created}.
 */
final class GroupStatus {
    private GroupStatus() {}

    /** One member read now; {@code status} empty when its run does not exist yet. */
    record Line(RunGroups.Member member, Optional<ExecutionStatus> status) {}

    static List<Line> read(Connections connections, RunGroups.Group g) {
        ExecutionStatusReader reader = new ExecutionStatusReader(connections.placements());
        List<Line> lines = new ArrayList<>();
        for (RunGroups.Member m : g.members()) {
            Optional<ExecutionStatus> s;
            try {
                s = Optional.of(reader.status(m.runId()));
            } catch (NotFoundException e) {
                s = Optional.empty();
            }
            lines.add(new Line(m, s));
        }
        return lines;
    }

    /** {@code overall 91.7%, math 100.0%}; {@code (so far)} after a table that is not final yet; {@code -} for none. */
    static String gates(ExecutionStatus s) {
        if (s.gates().isEmpty()) {
            return "-";
        }
        List<String> parts = new ArrayList<>();
        for (GateResult g : s.gates()) {
            parts.add(g.name() + " " + percent(g.passRate()));
        }
        return String.join(", ", parts) + (s.gatesFinal() ? "" : " (so far)");
    }

    /** {@code $0.0021 (2,680 tokens)}, {@code 2,680 tokens, cost unknown}, or {@code -} without recorded usage. */
    static String cost(ExecutionStatus s) {
        Optional<UsageSummary> u = s.runUsage();
        if (u.isEmpty() || u.get().all().calls() == 0) {
            return "-";
        }
        String tokens = String.format(Locale.ROOT, "%,d tokens", u.get().all().tokens());
        return u.get()
                .all()
                .costUsd()
                .map(c -> "$" + UsageSummary.decimal(c) + " (" + tokens + ")")
                .orElse(tokens + ", cost unknown");
    }

    private static String percent(double f) {
        return String.format(Locale.ROOT, "%.1f%%", f * 100);
    }

    static void print(PrintWriter out, RunGroups.Group g, List<Line> lines) {
        long missing = lines.stream().filter(l -> l.status().isEmpty()).count();
        out.printf(
                "group %s (%s): %d runs on dataset %s, created %s%s%n",
                g.name(),
                g.groupId(),
                lines.size(),
                g.datasetUploadId(),
                g.createdAt(),
                missing > 0 || g.completedAt().isEmpty()
                        ? "; incomplete: " + missing + " run(s) not created yet; repeat the `vigilo run create"
                                + " --agents` command that made it to finish it"
                        : "");
        List<String[]> rows = new ArrayList<>();
        rows.add(new String[] {"AGENT", "RUN", "STATUS", "VERDICT", "GATES (pass rate)", "COST"});
        for (Line l : lines) {
            if (l.status().isEmpty()) {
                rows.add(new String[] {
                    l.member().agentName(), l.member().runId().toString(), "not created", "-", "-", "-"
                });
                continue;
            }
            ExecutionStatus s = l.status().get();
            rows.add(new String[] {
                l.member().agentName(),
                l.member().runId().toString(),
                s.status(),
                s.verdict().orElse("-"),
                gates(s),
                cost(s)
            });
        }
        int[] width = new int[6];
        for (String[] r : rows) {
            for (int i = 0; i < r.length; i++) {
                width[i] = Math.max(width[i], r[i].length());
            }
        }
        for (String[] r : rows) {
            StringBuilder b = new StringBuilder();
            for (int i = 0; i < r.length; i++) {
                b.append(i == r.length - 1 ? r[i] : String.format("%-" + width[i] + "s  ", r[i]));
            }
            out.println(b.toString().stripTrailing());
        }
    }

    static Map<String, Object> json(RunGroups.Group g, List<Line> lines) {
        Map<String, Object> o = new LinkedHashMap<>();
        o.put("group_id", g.groupId().toString());
        o.put("name", g.name());
        o.put("dataset_upload_id", g.datasetUploadId().toString());
        o.put("created_at", g.createdAt().toString());
        o.put("completed_at", g.completedAt().map(Object::toString).orElse(null));
        List<Object> members = new ArrayList<>();
        for (Line l : lines) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("position", l.member().position());
            m.put("agent", l.member().agentName());
            m.put("run_id", l.member().runId().toString());
            if (l.status().isEmpty()) {
                m.put("status", "not_created");
                m.put("verdict", null);
                m.put("gates", List.of());
                m.put("tokens", null);
                m.put("cost_usd", null);
            } else {
                ExecutionStatus s = l.status().get();
                m.put("status", s.status());
                m.put("verdict", s.verdict().orElse(null));
                List<Object> gates = new ArrayList<>();
                for (GateResult gr : s.gates()) {
                    Map<String, Object> x = new LinkedHashMap<>();
                    x.put("name", gr.name());
                    x.put("planned", gr.planned());
                    x.put("executed", gr.executed());
                    x.put("passed", gr.passed());
                    x.put("pass_rate", gr.passRate());
                    x.put("decision", gr.decision().map(d -> d.spelling()).orElse(null));
                    gates.add(x);
                }
                m.put("gates", gates);
                m.put("gates_final", s.gatesFinal());
                Optional<UsageSummary> u = s.runUsage();
                m.put("tokens", u.map(x -> x.all().tokens()).orElse(null));
                m.put(
                        "cost_usd",
                        u.flatMap(x -> x.all().costUsd())
                                .map(UsageSummary::decimal)
                                .orElse(null));
            }
            members.add(m);
        }
        o.put("members", members);
        return o;
    }
}
