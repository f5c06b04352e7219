package dev.vigilo.agent;

import dev.vigilo.agent.sandbox.SandboxAttempt;
import dev.vigilo.llm.ChatTool;
import java.time.Duration;
import java.util.Optional;

/**
 * One tool an http agent offers its model (docs/formats/agent-protocol.md, "Tools"): its function definition, and
 * how to call it. A {@link CommandTool} runs a program per call; other kinds (an MCP server's tools) implement the
 * same interface and join the same {@link ToolSet}. Implementations are thread-safe: with {@code parallel_tool_calls}
 * one tool may be called concurrently.
 */
interface Tool {
    /** The function definition offered in the request (name, description, JSON Schema of the arguments). */
    ChatTool definition();

    /**
     * Calls the tool with arguments already checked against {@link #definition()}'s schema. Never throws for the
     * tool's own failures: a tool that fails or times out is an {@link ToolResult#error error result}, handed to the
     * model. Interrupting the calling thread stops the call ({@link ToolResult#cancelled()}).
     *
     * @param arguments the arguments as the model wrote them (valid JSON)
     * @param timeout   the most the call may take
     * @param sandbox   the case's sandbox, in which a tool that runs a command runs it (docs/formats/agent-protocol.md,
     *                  "Sandboxes"); empty to run on the host
     */
    ToolResult call(String arguments, Duration timeout, Optional<SandboxAttempt> sandbox);
}
