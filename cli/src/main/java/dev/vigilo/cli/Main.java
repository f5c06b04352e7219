package dev.vigilo.cli;

/** Entry point of the {@code vigilo} command. */
public final class Main {
    private Main() {}

    public static void main(String[] args) {
        Environment environment = Environment.system();
        TemporaryDirectory.useVigiloHome(environment);
        int code = Cli.run(
                environment,
                new java.io.PrintWriter(System.out, true),
                new java.io.PrintWriter(System.err, true),
                args);
        System.exit(code);
    }
}
