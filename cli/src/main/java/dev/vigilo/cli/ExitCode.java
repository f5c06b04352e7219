package dev.vigilo.cli;

/** The exit codes of every vigilo command. Scripts may rely on them; they are documented in docs/cli.md. */
public final class ExitCode {
    /** The command did what was asked (for a check: the object is intact). */
    public static final int OK = 0;
    /** A check found a negative answer (for example a damaged dataset). */
    public static final int FAILED = 1;
    /** The command line was wrong: unknown option, missing argument. */
    public static final int USAGE = 2;
    /** The input (a file, an id, a configuration) is invalid; nothing durable was changed. */
    public static final int INVALID_INPUT = 3;
    /** The request conflicts with durable state (for example an upload id naming other content). */
    public static final int CONFLICT = 4;
    /** A required service (control database, object store) failed or timed out; retrying may help. */
    public static final int UNAVAILABLE = 5;
    /** A bug: please report it with the output of --verbose. */
    public static final int INTERNAL = 70;
    /** Interrupted by the user (Ctrl-C). */
    public static final int INTERRUPTED = 130;

    private ExitCode() {}
}
