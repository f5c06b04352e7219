package dev.vigilo.agent;

import java.util.Objects;

/**
 * One tool call an agent made in an attempt: an http agent's call of one of its tools, or a command agent's
 * {@code tool_call} event (docs/formats/agent-protocol.md). What {@code tool_use} evaluators judge.
 *
 * @param id        the call's id (as the model or the agent gave it, or one Vigilo assigned)
 * @param name      the tool's name
 * @param arguments the arguments as written: JSON text, not necessarily valid
 */
public record AgentToolCall(String id, String name, String arguments) {
    public AgentToolCall {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(arguments, "arguments");
    }
}
