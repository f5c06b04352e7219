package dev.vigilo.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigilo.control.TestPostgres;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.UUID;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;
import picocli.CommandLine.Model.ArgSpec;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;

/**
 * Every command and sub-command, found in picocli's command spec (so a new command is covered without editing this
 * test), driven with malformed ids, unknown ids, bad names, missing, directory and garbage paths, invalid option
 * values and credential-bearing URLs. None may exit 70 (a bug), exit with an undocumented code, print a stack trace
 * or more than a few lines, or print a credential.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class CliSurfaceTest {
    private static final Set<Integer> DOCUMENTED = Set.of(0, 1, 2, 3, 4, 5, 130);
    private static final String SECRET = "S3cretPW";
    private static final Pattern STACK_FRAME = Pattern.compile("(?m)^\\s+at [\\w$.]+\\(");
    private static final Pattern EXCEPTION_DUMP = Pattern.compile("\\b[a-z][\\w]*(\\.[\\w$]+)+(Exception|Error)\\b");

    @TempDir
    static Path home;

    private CliRunner cli;
    private Path garbage;
    private Path directory;
    private Path missing;
    private int outputs;

    @BeforeAll
    void setUp() throws IOException {
        cli = new CliRunner(home, Map.of(), List.of("--control-db", TestPostgres.newDatabaseUrl()));
        byte[] noise = new byte[4096];
        new Random(7).nextBytes(noise);
        garbage = Files.write(home.resolve("garbage.bin"), noise);
        directory = Files.createDirectories(home.resolve("a-directory"));
        missing = home.resolve("no-such-dir").resolve("missing.file");
    }

    /** The leaf commands, by their qualified names ("vigilo dataset upload"), from the real command tree. */
    private static List<CommandSpec> leaves(CommandSpec spec) {
        List<CommandSpec> out = new ArrayList<>();
        if (spec.subcommands().isEmpty()) {
            out.add(spec);
        }
        for (CommandLine sub : spec.subcommands().values()) {
            if (!sub.getCommandSpec().name().equals("help") && !out.contains(sub.getCommandSpec())) {
                leaves(sub.getCommandSpec()).stream()
                        .filter(s -> !out.contains(s))
                        .forEach(out::add);
            }
        }
        return out;
    }

    private static List<CommandSpec> allCommands() {
        CommandSpec root = Cli.commandLine(new VigiloCommand(new Environment(Map.of(), Path.of("/nonexistent"))))
                .getCommandSpec();
        return leaves(root);
    }

    /** What kind of value an argument takes, from its type, label and names. */
    private enum Kind {
        ID,
        NAME,
        PATH,
        OUT,
        DURABLE_ROOT,
        NUMBER,
        TEXT,
        FLAG
    }

    private static Kind kindOf(ArgSpec arg) {
        Class<?> type = arg.type();
        String label = arg.paramLabel().toUpperCase(java.util.Locale.ROOT);
        String names = arg instanceof OptionSpec o ? String.join(",", o.names()) : "";
        if (type == boolean.class || type == Boolean.class) {
            return Kind.FLAG;
        }
        if (names.contains("--out")) {
            return Kind.OUT;
        }
        if (names.contains("--durable-root")) {
            return Kind.DURABLE_ROOT;
        }
        if (type == Path.class) {
            return Kind.PATH;
        }
        if (Number.class.isAssignableFrom(box(type))) {
            return Kind.NUMBER;
        }
        if (label.contains("ID") || label.contains("UUID")) {
            return label.contains("ITEM") ? Kind.NAME : Kind.ID;
        }
        if (names.contains("--pipeline")
                || names.contains("--experiment")
                || names.contains("--name")
                || names.contains("--store")
                || label.equals("NAME")) {
            return Kind.NAME;
        }
        return Kind.TEXT;
    }

    private static Class<?> box(Class<?> type) {
        if (type == int.class) {
            return Integer.class;
        }
        if (type == long.class) {
            return Long.class;
        }
        if (type == double.class) {
            return Double.class;
        }
        return type;
    }

    /** A value that gets past picocli, so the command's own checks run (it may still be refused later). */
    private String plausible(Kind kind) {
        return switch (kind) {
            case ID -> UUID.randomUUID().toString();
            case NAME -> "surface";
            case PATH -> garbage.toString();
            case OUT -> home.resolve("out-" + (outputs++) + ".jsonl").toString();
            case DURABLE_ROOT -> home.resolve("durable").toString();
            case NUMBER -> "1";
            case TEXT -> "x";
            case FLAG -> "";
        };
    }

    private List<String> bad(Kind kind) {
        return switch (kind) {
            case ID ->
                List.of(
                        "not-a-uuid",
                        "1-2-3-4-5",
                        "00000000-0000-0000-0000-000000000000",
                        UUID.randomUUID().toString().toUpperCase(java.util.Locale.ROOT),
                        UUID.randomUUID().toString());
            case NAME -> List.of("../ref", ".hidden", "a\nb\u001b[31m", "");
            case PATH -> List.of(missing.toString(), directory.toString(), garbage.toString(), "");
            case OUT -> List.of(missing.toString(), directory.toString(), garbage.toString());
            case DURABLE_ROOT -> List.of(garbage.toString(), "s3://", "ftp://u:" + SECRET + "@h/p");
            case NUMBER -> List.of("0", "-1", "abc");
            case TEXT -> List.of("", "{{{", "\u0000");
            case FLAG -> List.of();
        };
    }

    private record Case(String description, List<String> args) {}

    private List<Case> cases(CommandSpec command) {
        List<String> path = new ArrayList<>(List.of(command.qualifiedName(" ").split(" ")));
        path.remove(0); // "vigilo"
        if (command.findOption("--exit-when-idle") != null) {
            path.add("--exit-when-idle"); // otherwise it runs until stopped
        }
        // Required arguments and exclusive groups: fill what picocli needs with plausible values.
        Map<ArgSpec, String> base = new LinkedHashMap<>();
        for (ArgSpec arg : command.positionalParameters()) {
            base.put(arg, plausible(kindOf(arg)));
        }
        for (OptionSpec option : command.options()) {
            boolean inRequiredExclusiveGroup = option.group() != null
                    && option.group().exclusive()
                    && option.group().multiplicity().min() > 0
                    && option.group().options().get(0) != option;
            if ((option.required()
                            || (option.group() != null
                                    && option.group().multiplicity().min() > 0))
                    && !inRequiredExclusiveGroup
                    && kindOf(option) != Kind.FLAG
                    && option.scopeType() != CommandLine.ScopeType.INHERIT) {
                base.put(option, plausible(kindOf(option)));
            }
        }
        List<Case> cases = new ArrayList<>();
        cases.add(new Case("plausible", render(path, base)));
        List<ArgSpec> targets = new ArrayList<>(base.keySet());
        for (OptionSpec option : command.options()) {
            if (!base.containsKey(option)
                    && !option.usageHelp()
                    && !option.versionHelp()
                    && option.scopeType() != CommandLine.ScopeType.INHERIT
                    && kindOf(option) != Kind.FLAG) {
                targets.add(option);
            }
        }
        for (ArgSpec target : targets) {
            for (String value : bad(kindOf(target))) {
                Map<ArgSpec, String> args = new LinkedHashMap<>(base);
                args.put(target, value);
                String name = target instanceof OptionSpec o ? o.longestName() : target.paramLabel();
                cases.add(new Case(name + "=" + value, render(path, args)));
            }
        }
        return cases;
    }

    private static List<String> render(List<String> path, Map<ArgSpec, String> args) {
        List<String> out = new ArrayList<>(path);
        args.forEach((arg, value) -> {
            if (arg instanceof OptionSpec o) {
                out.add(o.longestName());
            }
            out.add(value);
        });
        return out;
    }

    @Test
    void noCommandAnswersBadInputWithAnInternalErrorAStackTraceOrACredential() {
        List<CommandSpec> commands = allCommands();
        assertThat(commands)
                .extracting(c -> c.qualifiedName(" "))
                .contains(
                        "vigilo dataset upload", "vigilo run create", "vigilo session repair", "vigilo datagen export");
        int runs = 0;
        for (CommandSpec command : commands) {
            if (command.name().equals("quickstart")) {
                continue; // takes no input; QuickstartIT runs it
            }
            if (command.qualifiedName(" ").equals("vigilo serve")
                    || command.qualifiedName(" ").equals("vigilo session view")) {
                continue; // serve until interrupted; ServeCliTest checks their input
            }
            for (Case c : cases(command)) {
                check(
                        command.qualifiedName(" ") + " [" + c.description() + "]",
                        cli.run(c.args().toArray(String[]::new)));
                runs++;
            }
        }
        System.out.println("CliSurfaceTest: " + commands.size() + " commands, " + runs + " command lines");
        assertThat(runs).isGreaterThan(100);
    }

    @Test
    void credentialsAndMalformedUrlsInGlobalOptionsAreInputErrors() {
        for (String url : List.of(
                "mysql://u:" + SECRET + "@h/db",
                "jdbc:postgresql://u:" + SECRET + "@127.0.0.1:1/v",
                "jdbc:postgresql://h:notaport/v?password=" + SECRET,
                "postgresql://127.0.0.1/v?user=u&password=" + SECRET)) {
            CliRunner.Result r = new CliRunner(home, Map.of(), List.of("--control-db", url)).run("dataset", "list");
            check("--control-db " + url, r);
            assertThat(r.exitCode()).as(url).isEqualTo(ExitCode.INVALID_INPUT);
            assertThat(r.err()).as(url).contains("expected jdbc:postgresql://HOST[:PORT]/DATABASE");
        }
        CliRunner.Result unreachable = new CliRunner(
                        home, Map.of(), List.of("--control-db", "jdbc:postgresql://127.0.0.1:1/v?password=" + SECRET))
                .run("dataset", "list");
        check("unreachable", unreachable);
        assertThat(unreachable.exitCode()).isEqualTo(ExitCode.UNAVAILABLE);
        for (Path config : List.of(missing, directory, garbage)) {
            CliRunner.Result r =
                    cli.run("--storage-config", config.toString(), "dataset", "upload", garbage.toString());
            check("--storage-config " + config, r);
        }
    }

    private static void check(String what, CliRunner.Result r) {
        String err = r.err();
        assertThat(r.exitCode()).as(what + "\n" + err).isIn(DOCUMENTED);
        assertThat(STACK_FRAME.matcher(err).find())
                .as(what + ": stack trace\n" + err)
                .isFalse();
        assertThat(EXCEPTION_DUMP.matcher(err).find())
                .as(what + ": exception class\n" + err)
                .isFalse();
        long lines = err.lines().count();
        assertThat(lines)
                .as(what + ": stderr lines\n" + err)
                .isLessThanOrEqualTo(r.exitCode() == ExitCode.USAGE ? 8 : 2);
        assertThat(err + r.out()).as(what + ": credential").doesNotContain(SECRET);
        assertThat(err).as(what + ": raw escape").doesNotContain("\u001b");
    }
}
