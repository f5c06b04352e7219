package dev.vigilo.agent;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * Watches one agent call as it happens, for transcripts (a session log of each request, answer and event). Every
 * method has a no-op default; {@link #NONE} observes nothing. Methods are called on the thread running the call, in
 * order: {@code onAttemptStart}, then requests/responses (HTTP) or events (command), then {@code onAttemptEnd}, for
 * each attempt. Implementations must be quick and must not throw; the nodes passed are not to be modified.
 */
public interface AgentObserver {
    /** Observes nothing. */
    AgentObserver NONE = new AgentObserver() {};

    /** Attempt {@code attempt} (1-based) is starting. */
    default void onAttemptStart(int attempt) {}

    /** HTTP agents: the chat completions request body about to be sent (the API key is a header, never here). */
    default void onRequest(int attempt, JsonNode request) {}

    /**
     * HTTP agents: the endpoint's answer, any status: the parsed JSON body, or a text node holding the body (at most
     * 64 KiB of it) when it is not JSON.
     */
    default void onResponse(int attempt, int status, JsonNode response) {}

    /**
     * Command agents: one event line the command wrote to its events file ({@code VIGILO_EVENTS},
     * docs/formats/agent-protocol.md), in the order written, delivered when the attempt's process has ended.
     */
    default void onEvent(int attempt, JsonNode event) {}

    /**
     * HTTP agents with {@code cache: true}: attempt {@code attempt} is answered from the cache under {@code key}
     * (nothing is sent; the answer follows as {@link #onResponse}).
     */
    default void onCachedAnswer(int attempt, String key) {}

    /**
     * HTTP agents with tools: the result of tool call {@code callId} (of tool {@code name}) of the answer just
     * observed, in call order, before the next request; {@code isError} when the tool failed, timed out, is unknown
     * or was given arguments that are not valid JSON or do not match its schema (the text says which).
     */
    default void onToolResult(int attempt, String callId, String name, String content, boolean isError) {}

    /** The attempt ended, with or without an output. */
    default void onAttemptEnd(AgentAttempt attempt) {}
}
