package dev.vigilo.agent;

import java.util.Objects;

/**
 * What one tool call returns to the model: its text, and whether it is an error (the {@code is_error} of MCP's tool
 * results: a tool that failed, timed out, is unknown or was given unusable arguments).
 *
 * @param content   the text sent as the {@code tool} message's content
 * @param isError   whether the call failed
 * @param cancelled whether the call was stopped because the worker was interrupted (no result of the case)
 */
record ToolResult(String content, boolean isError, boolean cancelled) {
    ToolResult {
        Objects.requireNonNull(content, "content");
    }

    static ToolResult ok(String content) {
        return new ToolResult(content, false, false);
    }

    static ToolResult error(String content) {
        return new ToolResult(content, true, false);
    }

    static ToolResult cancelledCall(String content) {
        return new ToolResult(content, true, true);
    }
}
