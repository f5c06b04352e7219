package dev.vigilo.common.errors;

/**
 * What kind of failure a {@link VigiloException} reports, and so what its caller can do about it. Every module
 * throws one of the kinds below; the command line maps each kind to one exit code (docs/cli.md), in one place.
 */
public enum ErrorKind {
    /** The input (an argument, a file, an id, a configuration) is wrong. Nothing durable changed; fix it and retry. */
    INVALID_INPUT,
    /** A named thing (dataset, run, log, object) does not exist. Nothing durable changed. */
    NOT_FOUND,
    /** The request conflicts with durable state or with another live owner; retrying the same request will not help. */
    CONFLICT,
    /** This process lost its authority (a lease or writer epoch was taken over) mid-way; none of its later writes count. */
    FENCED,
    /** Stored bytes are missing, or differ from the references that name them. */
    DAMAGED,
    /** A service (database, object store, endpoint) failed or timed out; retrying later may help. */
    UNAVAILABLE,
    /** A commit was attempted and its outcome is unknown: check the durable state before retrying. */
    STATE_UNKNOWN,
    /** The operation stopped because it was asked to (Ctrl-C, cancellation); what it committed stays. */
    CANCELLED
}
