package dev.vigilo.cli;

import dev.vigilo.common.errors.ErrorKind;

/** The exit codes of every vigilo command. Scripts may rely on them; they are documented in docs/cli.md. */
public final class ExitCode {
    /** The command did what was asked (for a check: the object is intact). */
    public static final int OK = 0;
    /** A check found a negative answer (for example a damaged dataset). */
    public static final int FAILED = 1;
    /** The command line was wrong: unknown option, missing argument. */
    public static final int USAGE = 2;
    /** The input (a file, an id, a name, a configuration) is invalid or names nothing; nothing durable was changed. */
    public static final int INVALID_INPUT = 3;
    /** The request conflicts with durable state or another live owner, or this process lost its authority. */
    public static final int CONFLICT = 4;
    /** A required service (control database, object store) failed or timed out; retrying may help. */
    public static final int UNAVAILABLE = 5;
    /** A bug: please report it with the output of --verbose. */
    public static final int INTERNAL = 70;
    /** Interrupted by the user (Ctrl-C). */
    public static final int INTERRUPTED = 130;

    private ExitCode() {}

    /** The exit code of every error of {@code kind}: the one mapping from the error taxonomy to exit codes. */
    public static int of(ErrorKind kind) {
        return switch (kind) {
            case INVALID_INPUT, NOT_FOUND -> INVALID_INPUT;
            case CONFLICT, FENCED -> CONFLICT;
            case DAMAGED -> FAILED;
            case UNAVAILABLE, STATE_UNKNOWN -> UNAVAILABLE;
            case CANCELLED -> INTERRUPTED;
        };
    }
}
