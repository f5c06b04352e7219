package dev.vigilo.agent;

import java.util.Objects;

/**
 * Why an agent attempt failed.
 *
 * @param type      what kind of failure (its {@link AgentErrorType#code()} is stable)
 * @param message   one line: what failed, where, and what to do; includes a bounded stderr tail for commands and
 *                  never a credential
 * @param retryable whether this attempt's failure is worth another attempt under the retry policy
 */
public record AgentError(AgentErrorType type, String message, boolean retryable) {
    public AgentError {
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(message, "message");
    }

    /** An error whose retryability is its type's default. */
    public static AgentError of(AgentErrorType type, String message) {
        return new AgentError(type, message, type.retryable());
    }
}
