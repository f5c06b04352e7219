package dev.vigilo.cli;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** Runs the real CLI in-process with captured output. */
final class CliRunner {
    record Result(int exitCode, String out, String err) {}

    private final Environment environment;
    private final List<String> leadingArgs;

    CliRunner(Path home, Map<String, String> extraEnv, List<String> leadingArgs) {
        java.util.HashMap<String, String> env = new java.util.HashMap<>(extraEnv);
        env.put(Environment.HOME_VARIABLE, home.toString());
        this.environment = new Environment(env, home);
        this.leadingArgs = List.copyOf(leadingArgs);
    }

    Result run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        List<String> all = new ArrayList<>(leadingArgs);
        all.addAll(List.of(args));
        int code = Cli.run(environment, new PrintWriter(out), new PrintWriter(err), all.toArray(String[]::new));
        return new Result(code, out.toString(), err.toString());
    }
}
