package dev.vigilo.agent;

import com.fasterxml.jackson.databind.JsonNode;
import dev.vigilo.common.errors.SecretValues;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;

/**
 * What agents and evaluators run with on this worker, besides the run configuration.
 *
 * @param variables        the worker's environment: passed to commands (plus the profile's {@code env}) and the
 *                         source of {@code api_key_env}
 * @param workingDirectory the working directory of commands; relative programs are resolved from it
 * @param scratchDirectory where per-attempt files (a command's events file) are created and removed again
 * @param initialBackoff   upper bound of the first wait between attempts (full jitter, doubling)
 * @param maxBackoff       upper bound of every wait between attempts
 * @param maxRetryAfter    the longest {@code Retry-After} of a 429 answer that is honoured; longer ones are cut to it
 * @param regexTimeLimit   how long one regex evaluation may run before it ends in an evaluator {@code timeout}
 * @param secrets          the values masked in everything agents and evaluators hand on (outputs, errors, what
 *                         observers see): the run's, see {@link #forRun}
 * @param answers          where an http agent with {@code cache: true} finds earlier answers to identical requests and
 *                         leaves its own ({@link AnswerCache#NONE} for nowhere)
 * @param limiters         the limiter of each model endpoint agents and judges call ({@link EndpointLimiters#NONE}:
 *                         none)
 */
public record AgentEnvironment(
        Map<String, String> variables,
        Path workingDirectory,
        Path scratchDirectory,
        Duration initialBackoff,
        Duration maxBackoff,
        Duration maxRetryAfter,
        Duration regexTimeLimit,
        SecretValues secrets,
        AnswerCache answers,
        EndpointLimiters limiters) {

    /** An environment without limiters. */
    public AgentEnvironment(
            Map<String, String> variables,
            Path workingDirectory,
            Path scratchDirectory,
            Duration initialBackoff,
            Duration maxBackoff,
            Duration maxRetryAfter,
            Duration regexTimeLimit,
            SecretValues secrets,
            AnswerCache answers) {
        this(
                variables,
                workingDirectory,
                scratchDirectory,
                initialBackoff,
                maxBackoff,
                maxRetryAfter,
                regexTimeLimit,
                secrets,
                answers,
                EndpointLimiters.NONE);
    }

    /** An environment without an answer cache. */
    public AgentEnvironment(
            Map<String, String> variables,
            Path workingDirectory,
            Path scratchDirectory,
            Duration initialBackoff,
            Duration maxBackoff,
            Duration maxRetryAfter,
            Duration regexTimeLimit,
            SecretValues secrets) {
        this(
                variables,
                workingDirectory,
                scratchDirectory,
                initialBackoff,
                maxBackoff,
                maxRetryAfter,
                regexTimeLimit,
                secrets,
                AnswerCache.NONE);
    }

    /** Default {@link #initialBackoff()}. */
    public static final Duration DEFAULT_INITIAL_BACKOFF = Duration.ofMillis(500);
    /** Default {@link #maxBackoff()}. */
    public static final Duration DEFAULT_MAX_BACKOFF = Duration.ofSeconds(10);
    /** Default {@link #maxRetryAfter()}. */
    public static final Duration DEFAULT_MAX_RETRY_AFTER = Duration.ofSeconds(30);
    /** Default {@link #regexTimeLimit()}. */
    public static final Duration DEFAULT_REGEX_TIME_LIMIT = Duration.ofSeconds(10);

    public AgentEnvironment {
        Objects.requireNonNull(answers, "answers");
        Objects.requireNonNull(limiters, "limiters");
        variables = Map.copyOf(variables);
        workingDirectory = workingDirectory.toAbsolutePath();
        scratchDirectory = scratchDirectory.toAbsolutePath();
        Objects.requireNonNull(initialBackoff, "initialBackoff");
        Objects.requireNonNull(maxBackoff, "maxBackoff");
        Objects.requireNonNull(maxRetryAfter, "maxRetryAfter");
        Objects.requireNonNull(regexTimeLimit, "regexTimeLimit");
        Objects.requireNonNull(secrets, "secrets");
        if (initialBackoff.isNegative() || maxBackoff.compareTo(initialBackoff) < 0) {
            throw new IllegalArgumentException("need 0 <= initialBackoff <= maxBackoff");
        }
        if (maxRetryAfter.isNegative() || regexTimeLimit.isNegative() || regexTimeLimit.isZero()) {
            throw new IllegalArgumentException("maxRetryAfter must be >= 0 and regexTimeLimit > 0");
        }
    }

    /**
     * This process's environment variables and current directory, {@code java.io.tmpdir} as scratch directory, the
     * default waits, and no secrets yet ({@link #forRun} adds a run's).
     */
    public static AgentEnvironment system() {
        return new AgentEnvironment(
                System.getenv(),
                Path.of("").toAbsolutePath(),
                Path.of(System.getProperty("java.io.tmpdir")),
                DEFAULT_INITIAL_BACKOFF,
                DEFAULT_MAX_BACKOFF,
                DEFAULT_MAX_RETRY_AFTER,
                DEFAULT_REGEX_TIME_LIMIT,
                SecretValues.NONE);
    }

    /**
     * The environment of one run's agent and evaluators: these secrets plus the values of the variables that every
     * {@code *_env} key of the run's configuration names (docs/formats/plan-configuration.md: the agent's {@code
     * api_key_env} today, and any other {@code *_env} key at any depth, so a new kind of step with a key is covered
     * without new code). Commands inherit {@link #variables()}, so they can print any of those values: they are
     * masked in everything agents and evaluators hand on.
     */
    public AgentEnvironment forRun(JsonNode configuration) {
        return withSecrets(secrets.and(SecretValues.ofEnvKeys(configuration, variables::get)));
    }

    /** Names the variables but never prints their values (they may hold credentials), nor the secrets. */
    @Override
    public String toString() {
        return "AgentEnvironment[variables="
                + variables.keySet().stream().sorted().toList() + ", workingDirectory="
                + workingDirectory + ", scratchDirectory=" + scratchDirectory + ", initialBackoff=" + initialBackoff
                + ", maxBackoff=" + maxBackoff + ", maxRetryAfter=" + maxRetryAfter + ", regexTimeLimit="
                + regexTimeLimit + ", secrets=" + secrets + "]";
    }

    /** The same environment with other variables. */
    public AgentEnvironment withVariables(Map<String, String> newVariables) {
        return new AgentEnvironment(
                newVariables,
                workingDirectory,
                scratchDirectory,
                initialBackoff,
                maxBackoff,
                maxRetryAfter,
                regexTimeLimit,
                secrets,
                answers,
                limiters);
    }

    /** The same environment with another working directory. */
    public AgentEnvironment withWorkingDirectory(Path directory) {
        return new AgentEnvironment(
                variables,
                directory,
                scratchDirectory,
                initialBackoff,
                maxBackoff,
                maxRetryAfter,
                regexTimeLimit,
                secrets,
                answers,
                limiters);
    }

    /** The same environment with other waits between attempts. */
    public AgentEnvironment withBackoff(Duration initial, Duration max, Duration retryAfterCap) {
        return new AgentEnvironment(
                variables,
                workingDirectory,
                scratchDirectory,
                initial,
                max,
                retryAfterCap,
                regexTimeLimit,
                secrets,
                answers,
                limiters);
    }

    /** The same environment with another regex time limit. */
    public AgentEnvironment withRegexTimeLimit(Duration limit) {
        return new AgentEnvironment(
                variables,
                workingDirectory,
                scratchDirectory,
                initialBackoff,
                maxBackoff,
                maxRetryAfter,
                limit,
                secrets,
                answers,
                limiters);
    }

    /** The same environment with other secrets. */
    public AgentEnvironment withSecrets(SecretValues newSecrets) {
        return new AgentEnvironment(
                variables,
                workingDirectory,
                scratchDirectory,
                initialBackoff,
                maxBackoff,
                maxRetryAfter,
                regexTimeLimit,
                newSecrets,
                answers,
                limiters);
    }

    /** The same environment with another answer cache. */
    public AgentEnvironment withAnswers(AnswerCache cache) {
        return new AgentEnvironment(
                variables,
                workingDirectory,
                scratchDirectory,
                initialBackoff,
                maxBackoff,
                maxRetryAfter,
                regexTimeLimit,
                secrets,
                cache,
                limiters);
    }

    /** The same environment with other endpoint limiters. */
    public AgentEnvironment withLimiters(EndpointLimiters newLimiters) {
        return new AgentEnvironment(
                variables,
                workingDirectory,
                scratchDirectory,
                initialBackoff,
                maxBackoff,
                maxRetryAfter,
                regexTimeLimit,
                secrets,
                answers,
                newLimiters);
    }
}
