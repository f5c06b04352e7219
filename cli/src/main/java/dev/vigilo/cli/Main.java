package dev.vigilo.cli;

/** Entry point of the {@code vigilo} command. */
public final class Main {
    private Main() {}

    public static void main(String[] args) {
        int code = Cli.run(
                Environment.system(),
                new java.io.PrintWriter(System.out, true),
                new java.io.PrintWriter(System.err, true),
                args);
        System.exit(code);
    }
}
