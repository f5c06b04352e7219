package dev.vigilo.agent;

import java.util.Objects;

/**
 * One request to run the agent on one case.
 *
 * <p>Cancellation is by thread interruption: interrupting the thread inside {@link Agent#run} kills a command's whole
 * process tree or aborts the HTTP request, and the call returns a {@link AgentErrorType#CANCELLED} outcome promptly.
 *
 * @param caseRecord the case, as stored
 * @param observer   watches the attempts ({@link AgentObserver#NONE} for nothing)
 */
public record AgentCall(CaseRecord caseRecord, AgentObserver observer) {
    public AgentCall {
        Objects.requireNonNull(caseRecord, "caseRecord");
        Objects.requireNonNull(observer, "observer");
    }

    /** A call without an observer. */
    public static AgentCall of(CaseRecord caseRecord) {
        return new AgentCall(caseRecord, AgentObserver.NONE);
    }
}
