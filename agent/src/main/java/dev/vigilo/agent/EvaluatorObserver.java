package dev.vigilo.agent;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * Watches the model calls of evaluators that make them (judges), for transcripts: every request and answer of every
 * attempt, as {@link AgentObserver} does for an http agent. Methods have no-op defaults and are called on the thread
 * evaluating, in order; they must be quick and must not throw; the nodes passed are not to be modified. What is
 * passed has the run's secrets masked.
 */
public interface EvaluatorObserver {
    /** Observes nothing. */
    EvaluatorObserver NONE = new EvaluatorObserver() {};

    /**
     * Evaluator {@code evaluator} (its plan index and name) is about to send attempt {@code attempt} (1-based) of a
     * model call: the chat completions request body.
     */
    default void onModelRequest(int evaluator, String name, int attempt, JsonNode request) {}

    /**
     * The endpoint's answer to that attempt, any status: the parsed JSON body, or a text node holding (at most 64 KiB
     * of) a body that is not JSON; {@code millis} is the attempt's time.
     */
    default void onModelResponse(int evaluator, String name, int attempt, int status, JsonNode response, long millis) {}
}
