package dev.vigilo.agent;

/**
 * Why an agent call (or one attempt of it) ended without an output. Each type has a short, stable snake_case
 * {@link #code()} for receipts and reports (docs/formats/agent-protocol.md lists them), and says whether another
 * attempt may help.
 */
public enum AgentErrorType {
    /** The command's program cannot be started (missing, not executable). Deterministic: not retried. */
    AGENT_NOT_FOUND("agent_not_found", false),
    /** The command exited with a status other than 0. */
    NONZERO_EXIT("nonzero_exit", true),
    /** The command or the HTTP request did not finish within {@code timeout_seconds}. */
    TIMEOUT("timeout", true),
    /** The command printed something that is not an output (invalid UTF-8, {@code "output"} not a string). */
    INVALID_OUTPUT("invalid_output", true),
    /** The output (or the raw stdout or response body it came from) is over its size limit. Not retried. */
    OUTPUT_TOO_LARGE("output_too_large", false),
    /** The endpoint answered 408 or 5xx (retried) or another non-2xx status but 429 (not retried). */
    HTTP_STATUS("http_status", true),
    /** The endpoint answered 2xx with a body that is not a chat completion with a message. */
    INVALID_RESPONSE("invalid_response", true),
    /** The endpoint answered 429 Too Many Requests. */
    RATE_LIMITED("rate_limited", true),
    /** No connection to the endpoint, or it broke before the answer was complete. */
    CONNECTION_FAILED("connection_failed", true),
    /**
     * A per-case limit ({@code limits.case_seconds}, {@code case_tokens}, {@code case_cost_usd}) was exceeded: the
     * attempt running was stopped (a command killed with its process tree, a request aborted), or its tokens went over.
     * Not retried.
     */
    LIMIT_EXCEEDED("limit_exceeded", false),
    /**
     * An http agent with tools was still calling tools after {@code max_turns} model calls in one attempt. Not
     * retried: another attempt would pay for as many turns again.
     */
    MAX_TURNS("max_turns", false),
    /**
     * An MCP server of an http agent's {@code mcp_servers} could not be started, failed initialize or tools/list,
     * listed a tool name already offered, or exited during the attempt (the message quotes its stderr's end). Not
     * retried: a server that fails this way usually fails again.
     */
    MCP_SERVER_FAILED("mcp_server_failed", false),
    /** The calling thread was interrupted; the child process was killed or the request aborted. Not retried. */
    CANCELLED("cancelled", false);

    private final String code;
    private final boolean retryable;

    AgentErrorType(String code, boolean retryable) {
        this.code = code;
        this.retryable = retryable;
    }

    /** The stable snake_case code, e.g. {@code nonzero_exit}. */
    public String code() {
        return code;
    }

    /**
     * Whether another attempt may succeed. {@link #HTTP_STATUS} is retryable only for 408 and 5xx; the HTTP agent
     * decides per status, so this is the type's default.
     */
    public boolean retryable() {
        return retryable;
    }
}
