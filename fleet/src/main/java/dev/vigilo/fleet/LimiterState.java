package dev.vigilo.fleet;

import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;

/**
 * One fleet limiter's row ({@code endpoint_limiters}) and the one transition every worker applies to it under the
 * row's lock ({@link #step}): reports of how calls ended are folded in (the circuit breaker's count, the adaptive
 * rate), the token buckets refilled, and a batch of permits granted. Pure: the time is the database's, passed in, so
 * tests drive it (docs/execution.md, "Fleet rate limit" and "Circuit breaker").
 *
 * @param key                 the limiter key (sha256 of url, model and api-key variable name)
 * @param endpoint            what the key stands for, for people: url (credentials never: refused in profiles),
 *                            model and the key's variable name
 * @param limits              the configured limits the last lease applied
 * @param rateFactor          the fraction of the configured rates in use (adaptive; 1 when healthy)
 * @param rateReason          why {@code rateFactor} last changed
 * @param rateChangedAt       when it last changed
 * @param latencyBaselineMs   the slowly moving mean latency of answered calls, empty before the first samples
 * @param requestPermits      requests left in the bucket at {@code refilledAt}
 * @param tokenPermits        tokens left at {@code refilledAt} (negative: a debt)
 * @param refilledAt          when the buckets were last refilled
 * @param pausedUntil         no permits before this (an endpoint's 429 Retry-After), if set
 * @param circuit             the breaker's state
 * @param consecutiveFailures connection failures and 5xx in a row, fleet-wide
 * @param circuitSince        when the circuit entered its state
 * @param circuitReason       why
 * @param openUntil           end of the cool-down of an open circuit
 * @param probeHolder         the process sending the half-open probe
 * @param probeUntil          when that probe's claim lapses (a crashed prober's claim passes on)
 */
public record LimiterState(
        String key,
        String endpoint,
        Limits limits,
        double rateFactor,
        String rateReason,
        Instant rateChangedAt,
        Optional<Double> latencyBaselineMs,
        double requestPermits,
        double tokenPermits,
        Instant refilledAt,
        Optional<Instant> pausedUntil,
        Circuit circuit,
        int consecutiveFailures,
        Instant circuitSince,
        String circuitReason,
        Optional<Instant> openUntil,
        Optional<UUID> probeHolder,
        Optional<Instant> probeUntil) {

    /** The adaptive rate never goes below this fraction of the configured one. */
    public static final double MIN_FACTOR = 0.05;
    /** A 429 halves the fleet's rate (multiplicative decrease). */
    static final double RATE_LIMITED_FACTOR = 0.5;
    /** A latency rise lowers it by this factor. */
    static final double LATENCY_FACTOR = 0.7;
    /** Healthy answers raise it by this much of the configured rate (additive increase) ... */
    static final double INCREASE = 0.1;
    /** ... at most once per this long, and only this long after the last decrease. */
    static final Duration INCREASE_EVERY = Duration.ofSeconds(10);
    /** Decreases closer together than this count as one (a burst of 429s of one storm). */
    static final Duration DECREASE_EVERY = Duration.ofSeconds(2);
    /** The bucket holds at most this long of the current rate (at least one request): the burst. */
    public static final Duration BURST = Duration.ofSeconds(1);
    /** The longest Retry-After honoured by the fleet's pause. */
    public static final Duration MAX_PAUSE = Duration.ofSeconds(60);
    /** A latency rise: a report's mean above this multiple of the baseline ... */
    static final double LATENCY_RISE = 2.0;
    /** ... over at least this many answers. */
    static final int LATENCY_SAMPLES = 5;

    /** The breaker's states; the database spells them in lower case. */
    public enum Circuit {
        CLOSED,
        OPEN,
        HALF_OPEN;

        public String wire() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }

        public static Circuit ofWire(String s) {
            return valueOf(s.toUpperCase(java.util.Locale.ROOT));
        }
    }

    /**
     * An endpoint's configured limits, from the frozen profile (0: no such limit).
     *
     * @param requestsPerMinute {@code rate_limit.requests_per_minute}
     * @param tokensPerMinute   {@code rate_limit.tokens_per_minute}
     * @param maxInFlight       {@code rate_limit.max_in_flight}
     * @param failures          {@code circuit_breaker.failures}
     * @param coolDown          {@code circuit_breaker.cool_down_seconds}
     */
    public record Limits(int requestsPerMinute, int tokensPerMinute, int maxInFlight, int failures, Duration coolDown) {
        /** {@code circuit_breaker.failures} when not given. */
        public static final int DEFAULT_FAILURES = 5;
        /** {@code circuit_breaker.cool_down_seconds} when not given. */
        public static final int DEFAULT_COOL_DOWN_SECONDS = 30;

        public Limits {
            if (requestsPerMinute < 0 || tokensPerMinute < 0 || maxInFlight < 0 || failures < 1) {
                throw new IllegalArgumentException("limits must be >= 0 and failures >= 1");
            }
            Objects.requireNonNull(coolDown, "coolDown");
        }
    }

    /** How a probe sent in the half-open state ended, as far as the reporting process knows. */
    public enum Probe {
        NONE,
        ANSWERED,
        FAILED
    }

    /**
     * What one process tells the row at a lease: how its calls ended since its last lease.
     *
     * @param answered        calls the endpoint answered (any status but 429 and 5xx)
     * @param successSeen     whether one of them came after the failures below (the count of failures in a row
     *                        then starts from {@code trailingFailures})
     * @param trailingFailures connection failures and 5xx since the last answer
     * @param lastFailure     what the last of them was, for the circuit's reason
     * @param rateLimited     429 answers
     * @param retryAfter      the longest Retry-After among them (zero: none)
     * @param latencyMillis   the summed latency of answered calls ...
     * @param latencySamples  ... and how many
     * @param probe           how this process's probe ended
     * @param tokenDebt       tokens used beyond the estimates taken (negative: given back)
     */
    public record Report(
            int answered,
            boolean successSeen,
            int trailingFailures,
            String lastFailure,
            int rateLimited,
            Duration retryAfter,
            long latencyMillis,
            int latencySamples,
            Probe probe,
            long tokenDebt) {
        public static final Report NONE = new Report(0, false, 0, "", 0, Duration.ZERO, 0, 0, Probe.NONE, 0);

        public boolean isEmpty() {
            return equals(NONE);
        }
    }

    /**
     * What a process asks for at a lease.
     *
     * @param requests requests it wants permits for now
     * @param tokens   tokens it wants (estimates of those requests)
     * @param inFlight in-flight slots it wants to hold (what it uses plus what waits)
     * @param inUse    slots it uses now (never taken away)
     */
    public record Want(int requests, long tokens, int inFlight, int inUse) {}

    /**
     * What a lease granted, and the fleet's state the process follows until its next lease.
     *
     * @param requests  request permits
     * @param tokens    token permits
     * @param inFlight  in-flight slots now held (the process writes this to its holder row)
     * @param probe     whether this process sends the half-open probe
     * @param circuit   the circuit's state
     * @param openFor   how long the circuit stays open (zero unless open)
     * @param nextIn    when a request permit is next due (zero: now), for the process's next lease
     */
    public record Grant(
            int requests,
            long tokens,
            int inFlight,
            boolean probe,
            Circuit circuit,
            Duration openFor,
            Duration nextIn) {}

    /** The state after a step and what it granted. */
    public record Step(LimiterState state, Grant grant) {}

    /** A new row: full buckets, a closed circuit, the configured rate. */
    public static LimiterState fresh(String key, String endpoint, Limits limits, Instant now) {
        LimiterState s = new LimiterState(
                key,
                endpoint,
                limits,
                1.0,
                "configured",
                now,
                Optional.empty(),
                0,
                0,
                now,
                Optional.empty(),
                Circuit.CLOSED,
                0,
                now,
                "no failures",
                Optional.empty(),
                Optional.empty(),
                Optional.empty());
        return s.withBuckets(s.requestCapacity(), s.tokenCapacity(), now);
    }

    /** Requests per second now (configured times the factor); infinite without a request limit. */
    public double requestsPerSecond() {
        return limits.requestsPerMinute() == 0
                ? Double.POSITIVE_INFINITY
                : limits.requestsPerMinute() * rateFactor / 60;
    }

    /** Tokens per second now; infinite without a token limit. */
    public double tokensPerSecond() {
        return limits.tokensPerMinute() == 0 ? Double.POSITIVE_INFINITY : limits.tokensPerMinute() * rateFactor / 60;
    }

    double requestCapacity() {
        return capacity(requestsPerSecond());
    }

    double tokenCapacity() {
        return capacity(tokensPerSecond());
    }

    private static double capacity(double perSecond) {
        return Double.isInfinite(perSecond) ? 0 : Math.max(1, perSecond * BURST.toMillis() / 1000.0);
    }

    /**
     * The one transition of a lease at database time {@code now}: apply {@code limits} (the leasing process's
     * configuration), fold in {@code report}, refill, then grant {@code want} as far as the buckets, the pause, the
     * circuit and the in-flight slots of others ({@code othersInFlight}) allow.
     */
    public Step step(Instant now, UUID holder, Limits newLimits, Report report, Want want, int othersInFlight) {
        LimiterState s = refill(now).withLimits(newLimits);
        s = s.breaker(now, report).adapt(now, report);
        // A debt of tokens beyond the estimates (or estimates given back) settles against the bucket.
        s = s.withBuckets(s.requestPermits, s.tokenPermits - report.tokenDebt(), s.refilledAt);
        // The probe: an open circuit whose cool-down is over lets one process send one call.
        boolean probe = false;
        if (s.circuit != Circuit.CLOSED && !now.isBefore(s.openUntil.orElse(now))) {
            boolean claimable = s.probeHolder.isEmpty()
                    || s.probeHolder.get().equals(holder)
                    || !now.isBefore(s.probeUntil.orElse(now));
            if (claimable && want.requests() > 0) {
                probe = true;
                s = s.withCircuit(
                        Circuit.HALF_OPEN,
                        s.consecutiveFailures,
                        s.circuit == Circuit.HALF_OPEN ? s.circuitSince : now,
                        s.circuitReason,
                        s.openUntil,
                        Optional.of(holder),
                        Optional.of(now.plus(s.limits.coolDown())));
            }
        }
        int requests = 0;
        long tokens = 0;
        boolean paused = s.pausedUntil.isPresent() && now.isBefore(s.pausedUntil.get());
        if (s.circuit == Circuit.CLOSED && !paused) {
            requests = Double.isInfinite(s.requestsPerSecond())
                    ? want.requests()
                    : (int) Math.min(want.requests(), Math.floor(s.requestPermits));
            if (!Double.isInfinite(s.tokensPerSecond()) && requests > 0) {
                if (s.tokenPermits > 0) {
                    tokens = want.tokens();
                } else {
                    requests = 0;
                }
            }
            double leftRequests = Double.isInfinite(s.requestsPerSecond()) ? 0 : s.requestPermits - requests;
            double leftTokens = Double.isInfinite(s.tokensPerSecond()) ? 0 : s.tokenPermits - tokens;
            s = s.withBuckets(leftRequests, leftTokens, s.refilledAt);
        }
        // Without max_in_flight no slots are held (no holder row, no heartbeat for them).
        int inFlight = s.limits.maxInFlight() == 0
                ? 0
                : Math.min(want.inFlight(), Math.max(want.inUse(), s.limits.maxInFlight() - othersInFlight));
        Duration openFor = s.circuit == Circuit.OPEN && s.openUntil.isPresent() && now.isBefore(s.openUntil.get())
                ? Duration.between(now, s.openUntil.get())
                : Duration.ZERO;
        Duration nextIn = Duration.ZERO;
        if (paused) {
            nextIn = Duration.between(now, s.pausedUntil.get());
        } else if (!Double.isInfinite(s.requestsPerSecond()) && s.requestPermits < 1) {
            nextIn = Duration.ofNanos((long) ((1 - s.requestPermits) / s.requestsPerSecond() * 1e9));
        }
        if (!Double.isInfinite(s.tokensPerSecond()) && s.tokenPermits <= 0) {
            Duration tokenWait = Duration.ofNanos((long) ((1 - s.tokenPermits) / s.tokensPerSecond() * 1e9));
            nextIn = tokenWait.compareTo(nextIn) > 0 ? tokenWait : nextIn;
        }
        return new Step(s, new Grant(requests, tokens, inFlight, probe, s.circuit, openFor, nextIn));
    }

    /** The buckets refilled to {@code now} at the current rates, never above their capacity. */
    LimiterState refill(Instant now) {
        if (!now.isAfter(refilledAt)) {
            return this;
        }
        double seconds = Duration.between(refilledAt, now).toNanos() / 1e9;
        double r = Double.isInfinite(requestsPerSecond())
                ? 0
                : Math.min(requestCapacity(), requestPermits + seconds * requestsPerSecond());
        double t = Double.isInfinite(tokensPerSecond())
                ? 0
                : Math.min(tokenCapacity(), tokenPermits + seconds * tokensPerSecond());
        return withBuckets(r, t, now);
    }

    /** The breaker's count and state after {@code report}. */
    LimiterState breaker(Instant now, Report report) {
        int failures =
                report.successSeen() ? report.trailingFailures() : consecutiveFailures + report.trailingFailures();
        Duration cool = limits.coolDown();
        if (report.probe() == Probe.ANSWERED && circuit != Circuit.CLOSED) {
            return withCircuit(
                    Circuit.CLOSED,
                    report.trailingFailures(),
                    now,
                    "the half-open probe was answered",
                    Optional.empty(),
                    Optional.empty(),
                    Optional.empty());
        }
        if (report.probe() == Probe.FAILED) {
            return withCircuit(
                    Circuit.OPEN,
                    failures,
                    now,
                    "the half-open probe failed (" + report.lastFailure() + ")",
                    Optional.of(now.plus(cool)),
                    Optional.empty(),
                    Optional.empty());
        }
        if (circuit == Circuit.CLOSED && failures >= limits.failures()) {
            return withCircuit(
                    Circuit.OPEN,
                    failures,
                    now,
                    failures + " connection failures or 5xx in a row (last: " + report.lastFailure() + ")",
                    Optional.of(now.plus(cool)),
                    Optional.empty(),
                    Optional.empty());
        }
        return withCircuit(circuit, failures, circuitSince, circuitReason, openUntil, probeHolder, probeUntil);
    }

    /** The adaptive rate after {@code report}: AIMD on 429s and latency rises, recovering on healthy answers. */
    LimiterState adapt(Instant now, Report report) {
        double factor = rateFactor;
        String reason = rateReason;
        Instant changed = rateChangedAt;
        Optional<Double> baseline = latencyBaselineMs;
        Optional<Instant> pause = pausedUntil;
        boolean decreasable = !now.isBefore(rateChangedAt.plus(DECREASE_EVERY)) || rateFactor >= 1.0;
        if (report.rateLimited() > 0) {
            Duration after = report.retryAfter().compareTo(MAX_PAUSE) > 0 ? MAX_PAUSE : report.retryAfter();
            if (!after.isZero()) {
                Instant until = now.plus(after);
                pause = Optional.of(pause.filter(p -> p.isAfter(until)).orElse(until));
            }
            if (decreasable) {
                factor = Math.max(MIN_FACTOR, factor * RATE_LIMITED_FACTOR);
                reason = "429 Too Many Requests" + (after.isZero() ? "" : " (Retry-After " + after.toSeconds() + " s)")
                        + ": rate lowered";
                changed = now;
            }
        } else if (report.latencySamples() >= LATENCY_SAMPLES) {
            double mean = (double) report.latencyMillis() / report.latencySamples();
            if (baseline.isPresent() && baseline.get() > 0 && mean > LATENCY_RISE * baseline.get()) {
                if (decreasable) {
                    factor = Math.max(MIN_FACTOR, factor * LATENCY_FACTOR);
                    reason = String.format(
                            java.util.Locale.ROOT,
                            "latency rose from %.0f ms to %.0f ms: rate lowered",
                            baseline.get(),
                            mean);
                    changed = now;
                }
            } else {
                baseline = Optional.of(baseline.map(b -> 0.9 * b + 0.1 * mean).orElse(mean));
            }
        }
        if (changed == rateChangedAt
                && report.answered() > 0
                && report.rateLimited() == 0
                && factor < 1.0
                && !now.isBefore(rateChangedAt.plus(INCREASE_EVERY))) {
            factor = Math.min(1.0, factor + INCREASE);
            reason = factor >= 1.0 ? "answers healthy: back to the configured rate" : "answers healthy: rate raised";
            changed = now;
        }
        return new LimiterState(
                key,
                endpoint,
                limits,
                factor,
                reason,
                changed,
                baseline,
                requestPermits,
                tokenPermits,
                refilledAt,
                pause,
                circuit,
                consecutiveFailures,
                circuitSince,
                circuitReason,
                openUntil,
                probeHolder,
                probeUntil);
    }

    LimiterState withLimits(Limits l) {
        if (l.equals(limits)) {
            return this;
        }
        LimiterState s = new LimiterState(
                key,
                endpoint,
                l,
                rateFactor,
                rateReason,
                rateChangedAt,
                latencyBaselineMs,
                requestPermits,
                tokenPermits,
                refilledAt,
                pausedUntil,
                circuit,
                consecutiveFailures,
                circuitSince,
                circuitReason,
                openUntil,
                probeHolder,
                probeUntil);
        return s.withBuckets(
                Math.min(requestPermits, s.requestCapacity()), Math.min(tokenPermits, s.tokenCapacity()), refilledAt);
    }

    LimiterState withBuckets(double requests, double tokens, Instant at) {
        return new LimiterState(
                key,
                endpoint,
                limits,
                rateFactor,
                rateReason,
                rateChangedAt,
                latencyBaselineMs,
                requests,
                tokens,
                at,
                pausedUntil,
                circuit,
                consecutiveFailures,
                circuitSince,
                circuitReason,
                openUntil,
                probeHolder,
                probeUntil);
    }

    LimiterState withCircuit(
            Circuit c,
            int failures,
            Instant since,
            String reason,
            Optional<Instant> until,
            Optional<UUID> prober,
            Optional<Instant> probeEnd) {
        return new LimiterState(
                key,
                endpoint,
                limits,
                rateFactor,
                rateReason,
                rateChangedAt,
                latencyBaselineMs,
                requestPermits,
                tokenPermits,
                refilledAt,
                pausedUntil,
                c,
                failures,
                since,
                reason,
                until,
                prober,
                probeEnd);
    }
}
