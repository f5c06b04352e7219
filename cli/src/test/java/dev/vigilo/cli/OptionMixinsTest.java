package dev.vigilo.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;

/**
 * {@code --json} and {@code --out}/{@code --force} are declared once ({@link JsonOption}, {@link OutputFileOptions}):
 * every command that has them has the same option (one description), the commands that had them still do, and the
 * rules the old declarations gave picocli (export's required {@code --out}, {@code --out} or {@code --in-place}) hold,
 * with picocli's messages and exit code.
 */
class OptionMixinsTest {
    @TempDir
    Path home;

    private static void leaves(CommandSpec spec, List<CommandSpec> out) {
        if (spec.subcommands().isEmpty()) {
            out.add(spec);
        }
        for (CommandLine sub : spec.subcommands().values()) {
            if (!sub.getCommandSpec().name().equals("help")) {
                leaves(sub.getCommandSpec(), out);
            }
        }
    }

    private static List<CommandSpec> commands() {
        List<CommandSpec> out = new ArrayList<>();
        leaves(
                Cli.commandLine(new VigiloCommand(new Environment(Map.of(), Path.of("/nonexistent"))))
                        .getCommandSpec(),
                out);
        return out;
    }

    /** The qualified names of the commands having {@code option}, and the distinct descriptions it has there. */
    private static Set<String> having(String option, Set<String> descriptions) {
        Set<String> names = new TreeSet<>();
        for (CommandSpec c : commands()) {
            OptionSpec o = c.findOption(option);
            if (o != null) {
                names.add(c.qualifiedName(" ").substring("vigilo ".length()));
                descriptions.add(String.join(" ", o.description()));
            }
        }
        return names;
    }

    @Test
    void everyJsonOptionIsTheOneMixin() {
        Set<String> descriptions = new TreeSet<>();
        assertThat(having("--json", descriptions))
                .containsExactlyInAnyOrder(
                        "datagen export",
                        "datagen status",
                        "dataset upload",
                        "dataset show",
                        "dataset list",
                        "dataset verify",
                        "eval",
                        "placement list",
                        "run create",
                        "run status",
                        "run transcript",
                        "run compare",
                        "run groups",
                        "run rerun-errors",
                        "run review",
                        "run reviews",
                        "session verify",
                        "verify",
                        "worker");
        assertThat(descriptions).hasSize(1);
    }

    @Test
    void everyOutAndForceOptionIsTheOneMixin() {
        Set<String> outDescriptions = new TreeSet<>();
        Set<String> forceDescriptions = new TreeSet<>();
        List<String> writers = List.of("datagen export", "run results", "session repair", "session compact");
        assertThat(having("--out", outDescriptions)).containsExactlyInAnyOrderElementsOf(writers);
        assertThat(having("--force", forceDescriptions)).containsExactlyInAnyOrderElementsOf(writers);
        assertThat(outDescriptions).hasSize(1);
        assertThat(forceDescriptions).hasSize(1);
    }

    @Test
    void exportWithoutOutAndRepairWithOutAndInPlaceAreUsageErrors() {
        CliRunner cli = new CliRunner(home, Map.of(), List.of());
        CliRunner.Result export = cli.run("datagen", "export", "--pipeline", "p", "--experiment", "e");
        assertThat(export.exitCode()).isEqualTo(ExitCode.USAGE);
        assertThat(export.err()).contains("Missing required option: '--out=FILE'");

        Path log = home.resolve("session.jsonl");
        CliRunner.Result both = cli.run(
                "session",
                "repair",
                log.toString(),
                "--out",
                home.resolve("r.jsonl").toString(),
                "--in-place");
        assertThat(both.exitCode()).isEqualTo(ExitCode.USAGE);
        assertThat(both.err())
                .contains("--out=FILE, --in-place are mutually exclusive (specify only one)")
                .contains("Run 'vigilo session repair --help' for usage.");
    }
}
