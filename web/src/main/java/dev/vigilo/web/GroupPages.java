package dev.vigilo.web;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.vigilo.common.errors.NotFoundException;
import dev.vigilo.dataset.DatasetCatalog;
import dev.vigilo.dataset.DatasetEntry;
import dev.vigilo.exec.ExecutionStatus;
import dev.vigilo.exec.GateResult;
import dev.vigilo.exec.view.ExecutionStatusReader;
import dev.vigilo.plan.RunGroups;
import io.javalin.http.Context;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;

/**
 * The list of run groups ({@code /groups}, {@code /api/groups}; docs/web.md, "Run groups"): newest first, per group its
 * name, dataset, creation and, per member in the group's order, its agent, run, status, verdict and each gate's pass
 * rate, as {@code vigilo run status GROUP} prints them. A group's own page ({@code /groups/GROUP}) is
 * {@link RunPages#groupPage}'s: it opens the matrix of its runs.
 */
final class GroupPages {
    /** Groups a page lists by default; {@code ?limit=} takes up to {@link RunGroups#MAX_LIST}. */
    static final int GROUPS_PER_PAGE = 50;

    private final RunGroups groups;
    private final ExecutionStatusReader status;
    private final DatasetCatalog datasets;
    private final Views views;

    GroupPages(RunGroups groups, ExecutionStatusReader status, DatasetCatalog datasets, Views views) {
        this.groups = groups;
        this.status = status;
        this.datasets = datasets;
        this.views = views;
    }

    /** One member read now: its status is empty while an interrupted {@code run create --agents} left it to do. */
    private record Member(RunGroups.Member member, Optional<ExecutionStatus> status) {}

    private static int limit(Context ctx) {
        return (int) Params.number(ctx, "limit", 1, RunGroups.MAX_LIST, GROUPS_PER_PAGE);
    }

    private List<Member> members(RunGroups.Group g) {
        List<Member> out = new ArrayList<>();
        for (RunGroups.Member m : g.members()) {
            Optional<ExecutionStatus> s;
            try {
                s = Optional.of(status.status(m.runId()));
            } catch (NotFoundException e) {
                s = Optional.empty();
            }
            out.add(new Member(m, s));
        }
        return out;
    }

    /** {@code all 75.0%, math 90.0%} over planned, {@code (so far)} while the table is not final; empty for none. */
    private static String gates(ExecutionStatus s) {
        List<String> parts = new ArrayList<>();
        for (GateResult g : s.gates()) {
            parts.add(g.name() + " " + Views.percent(g.passRate()));
        }
        return parts.isEmpty() ? "" : String.join(", ", parts) + (s.gatesFinal() ? "" : " (so far)");
    }

    /** {@code GET /groups?limit=}: the groups, newest first, each linking to its matrix and its members to their runs. */
    void listPage(Context ctx) {
        int limit = limit(ctx);
        List<RunGroups.Group> list = groups.list(limit);
        Map<String, Object> m = views.page("Run groups", "runs");
        // Dataset names, each looked up once: a page's groups usually share a few datasets.
        Map<UUID, String> names = new HashMap<>();
        List<Map<String, Object>> rows = new ArrayList<>();
        for (RunGroups.Group g : list) {
            Map<String, Object> row = new LinkedHashMap<>();
            row.put("id", g.groupId().toString());
            row.put("short_id", g.groupId().toString().substring(0, 8));
            row.put("name", g.name());
            row.put("dataset_id", g.datasetUploadId().toString());
            row.put(
                    "dataset",
                    names.computeIfAbsent(
                            g.datasetUploadId(),
                            d -> datasets.find(d)
                                    .map(DatasetEntry::name)
                                    .orElse(d.toString().substring(0, 8))));
            row.put("created", Views.time(g.createdAt()));
            List<Member> members = members(g);
            long missing = members.stream().filter(x -> x.status().isEmpty()).count();
            row.put("runs", Views.count(members.size()));
            if (missing > 0 || g.completedAt().isEmpty()) {
                row.put("incomplete", missing + " of " + members.size() + " runs not created yet");
            }
            List<Map<String, Object>> ms = new ArrayList<>();
            for (Member x : members) {
                Map<String, Object> r = new LinkedHashMap<>();
                r.put("agent", x.member().agentName());
                r.put("run_id", x.member().runId().toString());
                if (x.status().isPresent()) {
                    ExecutionStatus s = x.status().get();
                    r.put("created", true);
                    r.put("status", s.status());
                    r.put("verdict", s.verdict().orElse(""));
                    r.put("gates", gates(s));
                } else {
                    r.put("created", false);
                }
                ms.add(r);
            }
            row.put("members", ms);
            rows.add(row);
        }
        m.put("groups", rows);
        m.put("empty", rows.isEmpty());
        // No cursor: the list is the newest groups; a full page says how to see more of them.
        if (list.size() == limit && limit < RunGroups.MAX_LIST) {
            m.put("more", "/groups?limit=" + Math.min(RunGroups.MAX_LIST, limit * 4));
        }
        views.render(ctx, "groups", m);
    }

    /** {@code GET /api/groups?limit=}: the same as JSON, each member as {@code run status GROUP --json} has it. */
    void listApi(Context ctx) {
        ObjectNode o = Dashboard.JSON.createObjectNode();
        ArrayNode a = o.putArray("groups");
        for (RunGroups.Group g : groups.list(limit(ctx))) {
            ObjectNode n = a.addObject()
                    .put("group_id", g.groupId().toString())
                    .put("name", g.name())
                    .put("dataset_upload_id", g.datasetUploadId().toString())
                    .put("created_at", g.createdAt().toString())
                    .put("completed_at", g.completedAt().map(Object::toString).orElse(null));
            ArrayNode ms = n.putArray("members");
            for (Member x : members(g)) {
                ObjectNode r = ms.addObject()
                        .put("position", x.member().position())
                        .put("agent", x.member().agentName())
                        .put("run_id", x.member().runId().toString());
                if (x.status().isEmpty()) {
                    r.put("status", "not_created").putNull("verdict").putNull("gates_final");
                    r.putArray("gates");
                    continue;
                }
                ExecutionStatus s = x.status().get();
                r.put("status", s.status()).put("verdict", s.verdict().orElse(null));
                ArrayNode gs = r.putArray("gates");
                for (GateResult g2 : s.gates()) {
                    gs.addObject()
                            .put("name", g2.name())
                            .put("planned", g2.planned())
                            .put("executed", g2.executed())
                            .put("passed", g2.passed())
                            .put("pass_rate", g2.passRate());
                }
                r.put("gates_final", s.gatesFinal());
            }
        }
        Dashboard.json(ctx, o);
    }
}
