package dev.vigilo.cli;

import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.exec.ExecutionConfig;
import dev.vigilo.exec.Placements;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code vigilo placement}: the execution databases ("placements") and their state. */
@Command(
        name = "placement",
        mixinStandardHelpOptions = true,
        description = "List execution databases and drain or activate them (docs/execution.md, \"Decisions\").",
        subcommands = {
            PlacementCommand.ListCommand.class,
            PlacementCommand.DrainCommand.class,
            PlacementCommand.ActivateCommand.class
        })
final class PlacementCommand implements Runnable {
    @Spec
    CommandSpec spec;

    @Override
    public void run() {
        spec.commandLine().usage(spec.commandLine().getOut());
    }

    /** {@code vigilo placement list [--json]}. */
    @Command(
            name = "list",
            mixinStandardHelpOptions = true,
            description = {
                "List the execution databases registered in the control database and those of this process's"
                        + " execution configuration: alias, state (active, draining), and whether this process"
                        + " reaches it."
            })
    static final class ListCommand implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Mixin
        JsonOption json;

        @Override
        public Integer call() {
            try (Connections connections = CommandSupport.root(spec).connections()) {
                ExecutionConfig config = connections.execution();
                Connections.Reachable reach = connections.reachablePlacements();
                Map<String, Placements.State> states = new LinkedHashMap<>();
                Placements.registered(connections.control()).forEach(r -> states.put(r.alias(), r.state()));
                TreeSet<String> aliases = new TreeSet<>(states.keySet());
                aliases.addAll(config.aliases());
                List<Map<String, Object>> rows = new ArrayList<>();
                for (String alias : aliases) {
                    Map<String, Object> row = new LinkedHashMap<>();
                    row.put("alias", alias);
                    row.put(
                            "state",
                            states.containsKey(alias) ? states.get(alias).sql() : null);
                    row.put("in_config", config.placements().containsKey(alias));
                    boolean reached = reach.placements().map(p -> p.has(alias)).orElse(false);
                    row.put("reachable", reached);
                    row.put("error", reach.unreachable().get(alias));
                    rows.add(row);
                }
                PrintWriter out = CommandSupport.out(spec);
                if (json.requested()) {
                    json.print(rows);
                    return ExitCode.OK;
                }
                int width = Math.max(
                        5, aliases.stream().mapToInt(String::length).max().orElse(5));
                String format = "%-" + width + "s  %-8s  %s%n";
                out.printf(format, "ALIAS", "STATE", "THIS PROCESS");
                for (Map<String, Object> row : rows) {
                    String reached = (Boolean) row.get("reachable")
                            ? "reaches it"
                            : row.get("error") != null
                                    ? "cannot reach it: " + CommandSupport.oneLine((String) row.get("error"))
                                    : "not in " + config.source();
                    out.printf(format, row.get("alias"), row.get("state") == null ? "-" : row.get("state"), reached);
                }
            }
            return ExitCode.OK;
        }
    }

    /** {@code vigilo placement drain ALIAS}. */
    @Command(
            name = "drain",
            mixinStandardHelpOptions = true,
            description = "Take no new admissions into the execution database ALIAS; work already admitted there"
                    + " finishes. Reads and writes the control database only.")
    static final class DrainCommand extends SetStateCommand {
        DrainCommand() {
            super(Placements.State.DRAINING);
        }
    }

    /** {@code vigilo placement activate ALIAS}. */
    @Command(
            name = "activate",
            mixinStandardHelpOptions = true,
            description = "Let the execution database ALIAS take new admissions again. Reads and writes the control"
                    + " database only.")
    static final class ActivateCommand extends SetStateCommand {
        ActivateCommand() {
            super(Placements.State.ACTIVE);
        }
    }

    /** A command that puts the execution database ALIAS in one state (drain, activate). */
    abstract static class SetStateCommand implements Callable<Integer> {
        private final Placements.State state;

        @Spec
        CommandSpec spec;

        @Parameters(index = "0", paramLabel = "ALIAS", description = "The execution database's alias.")
        String alias;

        SetStateCommand(Placements.State state) {
            this.state = state;
        }

        @Override
        public Integer call() {
            if (!ExecutionConfig.isAlias(alias)) {
                throw new InvalidInputException("ALIAS \"" + alias + "\" is not an execution database alias (1..63 of"
                        + " a-z, 0-9, '_' and '-', starting with a letter); see `vigilo placement list`");
            }
            try (Connections connections = CommandSupport.root(spec).connections()) {
                Placements.setState(connections.control(), alias, state);
                CommandSupport.out(spec)
                        .printf(
                                "execution database \"%s\" is %s%n",
                                alias,
                                state == Placements.State.DRAINING
                                        ? "draining: it takes no new admissions; admitted work finishes"
                                        : "active: it takes new admissions");
            }
            return ExitCode.OK;
        }
    }
}
