package dev.vigilo.agent;

import dev.vigilo.common.concurrent.Futures;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;

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

    /**
     * Starts the agent on one case without the caller waiting (docs/execution.md, "Calls in flight"): the outcome
     * {@link #run} would return, as a future. An agent that can wait for its model without a thread (an http agent
     * without tools) holds none while its request is in flight and handles each answer on {@code work}; any other
     * (a command, an http agent with tools) runs {@link #run} on {@code blocking}, a bounded pool, so at most that
     * pool's threads of such calls run at once and the others queue. Cancelling the future stops the call (a
     * command's process tree is killed, a request aborted); the future then ends cancelled.
     *
     * @param blocking where calls that block a thread run (their threads are interrupted on cancellation)
     * @param work     where an asynchronous call's short steps run (answers, retries, the observer's callbacks)
     */
    default CompletableFuture<AgentOutcome> start(AgentCall call, ExecutorService blocking, Executor work) {
        return Futures.supplyInterruptibly(blocking, () -> run(call));
    }

    /** Releases shared resources. Idempotent. */
    @Override
    void close();
}
