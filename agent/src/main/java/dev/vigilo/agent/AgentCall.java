package dev.vigilo.agent;

import dev.vigilo.agent.sandbox.SandboxAttempt;
import java.util.Objects;
import java.util.Optional;

/**
 * One request to run the agent on one case, in one epoch.
 *
 * <p>With a profile's {@code epochs.count} of n, every case is executed n times; each execution is one epoch and one
 * call, with its own attempts (retries stay within the call). A command agent reads the epoch from
 * {@code VIGILO_EPOCH}; an http agent with {@code seed_per_epoch} sends it as the request's {@code seed}
 * (docs/formats/agent-protocol.md).
 *
 * <p>Cancellation is by thread interruption: interrupting the thread inside {@link Agent#run} kills a command's whole
 * process tree or aborts the HTTP request, and the call returns a {@link AgentErrorType#CANCELLED} outcome promptly.
 *
 * @param caseRecord the case, as stored
 * @param observer   watches the attempts ({@link AgentObserver#NONE} for nothing)
 * @param epoch      which execution of the case this is, from 1 (1 when the profile has no epochs)
 * @param budget     the execution's per-case limits ({@link CaseBudget#NONE} for none)
 * @param sandbox    the sandbox every command of this execution runs in (docs/formats/agent-protocol.md,
 *                   "Sandboxes"); empty to run commands on the host
 */
public record AgentCall(
        CaseRecord caseRecord, AgentObserver observer, int epoch, CaseBudget budget, Optional<SandboxAttempt> sandbox) {
    /** Checks the components; an {@code epoch} below 1 is an {@link IllegalArgumentException}. */
    public AgentCall {
        Objects.requireNonNull(caseRecord, "caseRecord");
        Objects.requireNonNull(observer, "observer");
        Objects.requireNonNull(budget, "budget");
        Objects.requireNonNull(sandbox, "sandbox");
        if (epoch < 1) {
            throw new IllegalArgumentException("epoch must be at least 1 (epochs count from 1), got " + epoch);
        }
    }

    /** A call whose commands run on the host. */
    public AgentCall(CaseRecord caseRecord, AgentObserver observer, int epoch, CaseBudget budget) {
        this(caseRecord, observer, epoch, budget, Optional.empty());
    }

    /** A call without per-case limits. */
    public AgentCall(CaseRecord caseRecord, AgentObserver observer, int epoch) {
        this(caseRecord, observer, epoch, CaseBudget.NONE);
    }

    /** A call in epoch 1: a case executed once, as without epochs. */
    public AgentCall(CaseRecord caseRecord, AgentObserver observer) {
        this(caseRecord, observer, 1);
    }

    /** A call in epoch 1 without an observer. */
    public static AgentCall of(CaseRecord caseRecord) {
        return new AgentCall(caseRecord, AgentObserver.NONE, 1);
    }
}
