package dev.vigilo.cli;

/** Entry point of the {@code vigilo} command. */
public final class Main {
    private Main() {}

    public static void main(String[] args) {
        // Before anything touches a CompletableFuture: no thread per model call's answer on a 2-core machine.
        dev.vigilo.common.concurrent.Threads.asyncPoolOfAtLeastTwo();
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
