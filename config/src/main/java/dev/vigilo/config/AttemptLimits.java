package dev.vigilo.config;

/**
 * How often an agent call may be attempted (a profile's {@code agent.max_attempts}): one rule for the profile reader
 * that validates it and the agent runner that applies it, as {@link SafeRegex} is for patterns.
 */
public final class AttemptLimits {
    /** Attempts when a profile does not say. */
    public static final int DEFAULT_MAX_ATTEMPTS = 3;
    /** The most attempts a profile may ask for. */
    public static final int MAX_ATTEMPTS = 10;

    private AttemptLimits() {}
}
