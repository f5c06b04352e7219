package dev.vigilo.fleet;

import dev.vigilo.fleet.LimiterState.Circuit;
import dev.vigilo.llm.ChatCall;
import dev.vigilo.llm.ChatExchange;
import dev.vigilo.llm.ChatLimiter;
import dev.vigilo.llm.Usage;
import java.time.Duration;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.LongSupplier;

/**
 * This process's side of one fleet limiter (docs/execution.md, "Fleet rate limit", "Circuit breaker"): calls are
 * admitted from permits and in-flight slots leased in batches from the limiter's row by {@link ProcessLimiters}'s
 * lease thread, never by a database round trip of their own; a call finding none is held ({@link #admit} answers a
 * short hold, the client asks again) and makes a lease due. How calls end is gathered into the next lease's {@link
 * LimiterState.Report}. The breaker acts at once locally (the failure that opens it, and every failure meeting it, is
 * {@linkplain #resend sent again} rather than charged to an attempt) and follows the fleet's circuit at each lease;
 * only the process the row names sends the half-open probe. Thread-safe; never blocks (one monitor, short sections).
 */
public final class FleetLimiter implements ChatLimiter {
    /** How long a held call waits before asking again. */
    static final Duration POLL = Duration.ofMillis(25);
    /** Permits leased and not used within this long are dropped (never stockpiled: the overshoot bound). */
    static final Duration PERMIT_TTL = Duration.ofSeconds(1);
    /** A batch holds at most this long of the fleet's current rate (at least one request). */
    static final Duration BATCH = Duration.ofMillis(200);
    /** Leases of a key with nothing urgent are at least this far apart ... */
    static final Duration MIN_LEASE_GAP = Duration.ofMillis(20);
    /** ... and a process that holds slots or has something to report leases at least this often. */
    static final Duration HEARTBEAT = Duration.ofSeconds(1);
    /** While another process probes the circuit, leases are at least this far apart. */
    static final Duration HALF_OPEN_POLL = Duration.ofMillis(200);

    final String key;
    final String endpoint;
    final LimiterState.Limits limits;
    private final LongSupplier nanos;
    private final Runnable kick;

    /** A call admitted: its token estimate and when it went out. */
    private record Taken(long tokens, long startNanos) {}

    private double permits;
    private long permitsExpire;
    private long tokens;
    private int slots;
    private final Map<ChatCall, Long> held = new IdentityHashMap<>();
    private final Map<ChatCall, Taken> admitted = new IdentityHashMap<>();
    private final Set<ChatCall> resends = Collections.newSetFromMap(new IdentityHashMap<>());
    private Circuit circuit = Circuit.CLOSED;
    private long openUntil;
    /** When this process last opened its circuit itself (its own failures, or a failed probe). */
    private long openedLocallyAt = Long.MIN_VALUE / 2;

    private boolean probeGranted;
    private ChatCall probeCall;
    private int localFailures;
    // The report gathered for the next lease.
    private int answered;
    private boolean successSeen;
    private int trailingFailures;
    private String lastFailure = "";
    private int rateLimited;
    private Duration retryAfter = Duration.ZERO;
    private long latencyMillis;
    private int latencySamples;
    private LimiterState.Probe probe = LimiterState.Probe.NONE;
    private long tokenDebt;
    private boolean urgent = true;
    private long lastLease = Long.MIN_VALUE / 2;
    private long nextLease;
    private long retryAt = Long.MIN_VALUE / 2;
    private Optional<LimiterState> last = Optional.empty();

    FleetLimiter(String key, String endpoint, LimiterState.Limits limits, LongSupplier nanos, Runnable kick) {
        this.key = key;
        this.endpoint = endpoint;
        this.limits = limits;
        this.nanos = nanos;
        this.kick = kick;
    }

    @Override
    public Duration admit(ChatCall call) {
        synchronized (this) {
            if (admitted.containsKey(call)) {
                return Duration.ZERO;
            }
            long now = nanos.getAsLong();
            if (circuit != Circuit.CLOSED) {
                if (probeGranted && probeCall == null) {
                    probeCall = call;
                    take(call, now, false);
                    return Duration.ZERO;
                }
                held.put(call, call.tokenEstimate());
                long wait = circuit == Circuit.OPEN ? Math.max(POLL.toNanos(), openUntil - now) : POLL.toNanos() * 8;
                wakeAt(now);
                return Duration.ofNanos(Math.min(wait, HEARTBEAT.toNanos()));
            }
            if (now - permitsExpire > 0) {
                permits = 0;
            }
            boolean ok = (limits.maxInFlight() == 0 || admitted.size() < slots)
                    && (limits.requestsPerMinute() == 0 || permits >= 1)
                    && (limits.tokensPerMinute() == 0 || tokens > 0);
            if (!ok) {
                boolean first = held.put(call, call.tokenEstimate()) == null;
                if (first) {
                    wakeAt(now);
                }
                return POLL;
            }
            take(call, now, true);
            return Duration.ZERO;
        }
    }

    private void take(ChatCall call, long now, boolean usePermits) {
        held.remove(call);
        if (usePermits && limits.requestsPerMinute() > 0) {
            permits -= 1;
        }
        if (limits.tokensPerMinute() > 0) {
            tokens -= call.tokenEstimate();
        }
        admitted.put(call, new Taken(call.tokenEstimate(), now));
    }

    /** A lease is due now when waiting calls may be served by one (not before the minimum gap). */
    private void wakeAt(long now) {
        if (nextLease - now > 0) {
            return;
        }
        kick.run();
    }

    @Override
    public Duration reserve(ChatCall call) {
        return Duration.ZERO;
    }

    @Override
    public void settle(ChatCall call, ChatExchange x) {
        boolean wake = false;
        synchronized (this) {
            held.remove(call);
            Taken t = admitted.remove(call);
            if (t == null) {
                return;
            }
            long now = nanos.getAsLong();
            boolean failure = isFailure(x);
            boolean alive = !failure && x.status() != 0;
            if (alive && x.status() != 429) {
                if (x.status() / 100 == 2) {
                    answered++;
                    latencyMillis += (now - t.startNanos()) / 1_000_000;
                    latencySamples++;
                }
                long used = x.json()
                        .flatMap(j -> Usage.of(j.get("usage")))
                        .map(u -> u.promptTokens() + u.completionTokens())
                        .orElse(t.tokens());
                tokenDebt += used - t.tokens();
            } else {
                // Nothing (or a refusal) came back: the estimate is given back.
                tokenDebt -= t.tokens();
            }
            if (x.outcome() == ChatExchange.Outcome.RATE_LIMITED) {
                rateLimited++;
                Duration after = x.retryAfter(java.time.Instant.now()).orElse(Duration.ZERO);
                if (after.compareTo(retryAfter) > 0) {
                    retryAfter = after;
                }
                urgent = true;
                wake = true;
            }
            if (call == probeCall) {
                probeCall = null;
                probeGranted = false;
                urgent = true;
                wake = true;
                if (alive) {
                    probe = LimiterState.Probe.ANSWERED;
                    circuit = Circuit.CLOSED;
                    localFailures = 0;
                } else {
                    probe = LimiterState.Probe.FAILED;
                    lastFailure = describe(x);
                    circuit = Circuit.OPEN;
                    openedLocallyAt = now;
                    openUntil = now + limits.coolDown().toNanos();
                    resends.add(call);
                }
            }
            if (failure) {
                trailingFailures++;
                localFailures++;
                lastFailure = describe(x);
                if (circuit != Circuit.CLOSED) {
                    // It met an open circuit (it was in flight when the circuit opened): it waits, unpaid.
                    resends.add(call);
                } else if (localFailures >= limits.failures()) {
                    circuit = Circuit.OPEN;
                    openedLocallyAt = now;
                    openUntil = now + limits.coolDown().toNanos();
                    resends.add(call);
                    urgent = true;
                    wake = true;
                }
            } else if (alive) {
                successSeen = true;
                trailingFailures = 0;
                localFailures = 0;
            }
        }
        if (wake) {
            kick.run();
        }
    }

    @Override
    public boolean resend(ChatCall call) {
        synchronized (this) {
            return resends.remove(call);
        }
    }

    /** What the breaker counts: connection failures and 5xx answers. */
    static boolean isFailure(ChatExchange x) {
        return switch (x.outcome()) {
            case CONNECT_FAILED, CONNECT_TIMEOUT, CONNECTION_BROKEN -> true;
            case RETRYABLE_STATUS -> x.status() >= 500;
            default -> false;
        };
    }

    private static String describe(ChatExchange x) {
        return switch (x.outcome()) {
            case CONNECT_FAILED -> "connection refused or failed";
            case CONNECT_TIMEOUT -> "connect timeout";
            case CONNECTION_BROKEN -> "connection broken";
            case RETRYABLE_STATUS, RATE_LIMITED, REJECTED -> "HTTP " + x.status();
            default -> x.outcome().name().toLowerCase(java.util.Locale.ROOT);
        };
    }

    /** When this limiter's next lease is due ({@link Long#MAX_VALUE} offsets: none), at {@code now}. */
    synchronized long dueAt(long now) {
        long earliest = Math.max(lastLease + MIN_LEASE_GAP.toNanos(), retryAt);
        if (urgent) {
            return Math.max(now, earliest);
        }
        if (!held.isEmpty()) {
            long at = Math.max(nextLease, earliest);
            if (circuit == Circuit.OPEN && openUntil - at > 0) {
                at = openUntil;
            }
            if (circuit == Circuit.HALF_OPEN && probeCall == null && !probeGranted) {
                // Another process probes: look again now and then, not at the permit pace.
                at = Math.max(at, lastLease + HALF_OPEN_POLL.toNanos());
            }
            return at;
        }
        if (slots > 0 || !report().isEmpty()) {
            return lastLease + HEARTBEAT.toNanos();
        }
        return now + Duration.ofDays(1).toNanos();
    }

    /** The report since the last lease (not cleared). */
    private LimiterState.Report report() {
        return new LimiterState.Report(
                answered,
                successSeen,
                trailingFailures,
                lastFailure,
                rateLimited,
                retryAfter,
                latencyMillis,
                latencySamples,
                probe,
                tokenDebt);
    }

    /** A lease's request: what this process wants and its report (cleared: a failed lease loses it). */
    record Request(LimiterState.Want want, LimiterState.Report report) {}

    synchronized Request take() {
        long now = nanos.getAsLong();
        lastLease = now;
        urgent = false;
        if (now - permitsExpire > 0) {
            permits = 0;
        }
        int waiting = held.size();
        double perSecond = last.map(LimiterState::requestsPerSecond).orElse(limits.requestsPerMinute() / 60.0);
        int batch = limits.requestsPerMinute() == 0
                ? waiting
                : (int) Math.max(1, Math.ceil(perSecond * BATCH.toMillis() / 1000.0));
        int want = Math.max(0, Math.min(batch, waiting - (int) Math.floor(permits)));
        if (circuit != Circuit.CLOSED) {
            want = waiting > 0 ? 1 : 0;
        }
        long wantTokens = 0;
        if (limits.tokensPerMinute() > 0 && want > 0) {
            long sum = 0;
            for (long e : held.values()) {
                sum += e;
            }
            wantTokens = Math.max(1, sum * want / Math.max(1, waiting) - Math.max(0, tokens));
        }
        LimiterState.Report r = report();
        answered = 0;
        successSeen = false;
        trailingFailures = 0;
        lastFailure = "";
        rateLimited = 0;
        retryAfter = Duration.ZERO;
        latencyMillis = 0;
        latencySamples = 0;
        probe = LimiterState.Probe.NONE;
        tokenDebt = 0;
        int inUse = admitted.size();
        return new Request(new LimiterState.Want(want, wantTokens, inUse + waiting, inUse), r);
    }

    /** Takes a lease's grant and follows the fleet's state. */
    synchronized void apply(LimiterState.Step step) {
        long now = nanos.getAsLong();
        last = Optional.of(step.state());
        LimiterState.Grant g = step.grant();
        if (g.requests() > 0) {
            permits = Math.max(0, permits) + g.requests();
            permitsExpire = now + PERMIT_TTL.toNanos();
        }
        tokens += g.tokens();
        slots = g.inFlight();
        switch (g.circuit()) {
            case CLOSED -> {
                // A circuit this process opened after the lease's request was taken stays open: the row has not
                // heard of the failures that opened it yet (the next lease, due at once, reports them).
                boolean openedSinceRequest = circuit == Circuit.OPEN && openedLocallyAt - lastLease > 0;
                if (probeCall == null && circuit != Circuit.CLOSED && !openedSinceRequest) {
                    circuit = Circuit.CLOSED;
                    localFailures = 0;
                }
            }
            case OPEN -> {
                circuit = Circuit.OPEN;
                openUntil = now + g.openFor().toNanos();
            }
            case HALF_OPEN -> {
                // Likewise a probe that failed here after the lease's request was taken: the row still grants this
                // process the probe it has already used; a second one now would be a second probe in one cool-down.
                // The next lease, due at once, reports the failure and the row opens again.
                boolean openedSinceRequest = circuit == Circuit.OPEN && openedLocallyAt - lastLease > 0;
                if (!openedSinceRequest) {
                    circuit = Circuit.HALF_OPEN;
                    if (g.probe() && probeCall == null) {
                        probeGranted = true;
                    }
                }
            }
        }
        nextLease = now + Math.max(MIN_LEASE_GAP.toNanos(), g.nextIn().toNanos());
    }

    /** A lease failed (the control database did not answer): try again in a second; held calls keep waiting. */
    synchronized void failed() {
        retryAt = nanos.getAsLong() + HEARTBEAT.toNanos();
        urgent = true;
    }

    /** Makes a lease due at once (a run's endpoint to register, a change to report). */
    synchronized void markUrgent() {
        urgent = true;
    }

    /** The fleet's state as of the last lease, if any. */
    public synchronized Optional<LimiterState> lastState() {
        return last;
    }

    /** Calls held now (waiting for permits, slots or the circuit). */
    public synchronized int waiting() {
        return held.size();
    }

    /** This process's calls in flight now. */
    public synchronized int inFlight() {
        return admitted.size();
    }

    /** The limiter key ({@link ProcessLimiters#key}). */
    public String key() {
        return key;
    }

    /** What the key stands for, for people (url, model, the key's variable name). */
    public String endpoint() {
        return endpoint;
    }

    /** The limits this process applies at its leases (those of the first caller that named the key). */
    public LimiterState.Limits limits() {
        return limits;
    }

    @Override
    public String toString() {
        return "FleetLimiter[" + endpoint + "]";
    }
}
