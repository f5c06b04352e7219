package dev.vigilo.common.errors;

/**
 * What kind of failure a {@link VigiloException} reports, and so what its caller can do about it. Every module
 * throws one of the kinds below; the command line maps each kind to one exit code (docs/cli.md), in one place.
 *
 * <p><b>The outcome-unknown rule.</b> A commit (an SQL commit, a conditional object PUT, a checkpoint put) whose
 * request was sent but whose answer never came may or may not have taken effect. Which kind reports it depends on
 * whether the commit is idempotent, that is, whether repeating the same request after it took effect is harmless
 * and ends in the same state:
 *
 * <ul>
 *   <li>an idempotent commit whose outcome is unknown is {@link #UNAVAILABLE}: the caller (or its retry policy)
 *       simply repeats it. Examples: an object create (create-if-absent, then a content comparison), the dataset
 *       catalog insert (a second insert of the same upload finds the first), the plan's file registrations and
 *       acknowledgements (flags set to true, a cursor that only moves forward), a chunk's completion (conditional on
 *       the chunk lease's generation), a checkpoint batch (event ids make a replay a no-op);
 *   <li>a non-idempotent commit whose outcome is unknown is {@link #STATE_UNKNOWN}: it is never repeated as such and
 *       nothing it may have published is cleaned up; the caller first reads the durable state back (for the plan's
 *       publication commit: repeat the whole command with the same run id, which finds the plan published or not).
 * </ul>
 *
 * <p>docs/architecture.md ("One error taxonomy") lists every commit point and its class.
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
    /**
     * A service (database, object store, endpoint) failed or timed out, or an idempotent commit's outcome is unknown;
     * retrying later may help (see the outcome-unknown rule above).
     */
    UNAVAILABLE,
    /**
     * A non-idempotent commit was attempted and its outcome is unknown: read the durable state back before doing
     * anything else, and never clean up what the commit may have published (see the outcome-unknown rule above).
     */
    STATE_UNKNOWN,
    /** The operation stopped because it was asked to (Ctrl-C, cancellation); what it committed stays. */
    CANCELLED
}
