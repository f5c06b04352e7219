package dev.vigilo.agent;

/**
 * The agent under evaluation: a local command or an OpenAI-compatible chat completions endpoint, built from a run
 * configuration's {@code agent} object by {@link Agents#create}. The wire protocols are in
 * docs/formats/agent-protocol.md.
 *
 * <p>Thread-safe: one instance serves every case a worker runs concurrently. {@link #run} never throws for a failure
 * of the agent (not found, crash, timeout, bad answer, HTTP error): it retries per the agent's {@code max_attempts}
 * and returns the last error in the outcome. {@link #close()} releases shared resources (the HTTP client); calls
 * must have ended before it.
 */
public interface Agent extends AutoCloseable {
    /** The largest output an agent may produce, in UTF-8 bytes (1 MiB). */
    int MAX_OUTPUT_BYTES = 1 << 20;

    /**
     * Runs the agent on one case, retrying transient failures.
     *
     * @return the output, or the error of the last attempt; {@link AgentErrorType#CANCELLED} when the thread was
     *     interrupted (its interrupt status is then set again)
     * @throws dev.vigilo.common.errors.UnavailableException when the worker itself fails (its scratch directory
     *     cannot hold a command's events file): not a result of the case
     * @throws dev.vigilo.common.errors.InvalidInputException when the case is not a JSON object with an
     *     {@code input} (http agents parse it; stored cases were verified, so this means damage)
     */
    AgentOutcome run(AgentCall call);

    /** Releases shared resources. Idempotent. */
    @Override
    void close();
}
