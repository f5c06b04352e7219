package dev.vigilo.cli;

import dev.vigilo.plan.RunGroups;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code vigilo run groups}: the run groups, newest first (docs/cli.md). */
@Command(
        name = "groups",
        mixinStandardHelpOptions = true,
        description = {
            "List the run groups (`run create --agents`), newest first: name, id, members, created, and whether an"
                    + " interrupted creation left runs to create. `vigilo run status GROUP` shows one."
        })
final class RunGroupsCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(
            names = "--limit",
            paramLabel = "N",
            description = "At most N groups (1.." + RunGroups.MAX_LIST + ", default 50).")
    int limit = 50;

    @Mixin
    JsonOption json;

    @Override
    public Integer call() {
        if (limit < 1 || limit > RunGroups.MAX_LIST) {
            throw new dev.vigilo.common.errors.InvalidInputException(
                    "--limit " + limit + " is out of range; use 1.." + RunGroups.MAX_LIST);
        }
        try (Connections connections = CommandSupport.root(spec).connections()) {
            List<RunGroups.Group> groups = new RunGroups(connections.control().jdbi()).list(limit);
            if (json.requested()) {
                List<Object> a = new ArrayList<>();
                for (RunGroups.Group g : groups) {
                    Map<String, Object> o = new LinkedHashMap<>();
                    o.put("group_id", g.groupId().toString());
                    o.put("name", g.name());
                    o.put("dataset_upload_id", g.datasetUploadId().toString());
                    o.put("created_at", g.createdAt().toString());
                    o.put("completed_at", g.completedAt().map(Object::toString).orElse(null));
                    List<Object> members = new ArrayList<>();
                    for (RunGroups.Member m : g.members()) {
                        members.add(Map.of(
                                "agent", m.agentName(), "run_id", m.runId().toString()));
                    }
                    o.put("members", members);
                    a.add(o);
                }
                json.print(Map.of("groups", a));
                return ExitCode.OK;
            }
            PrintWriter out = CommandSupport.out(spec);
            if (groups.isEmpty()) {
                out.println("no run groups yet; `vigilo run create --agents agents.yaml ...` makes one");
            }
            for (RunGroups.Group g : groups) {
                out.printf(
                        "%s  %s  %d runs (%s)  created %s%s%n",
                        g.name(),
                        g.groupId(),
                        g.members().size(),
                        String.join(
                                ", ",
                                g.members().stream()
                                        .map(RunGroups.Member::agentName)
                                        .toList()),
                        g.createdAt(),
                        g.completedAt().isPresent() ? "" : "  incomplete: repeat its run create --agents command");
            }
            out.flush();
        }
        return ExitCode.OK;
    }
}
