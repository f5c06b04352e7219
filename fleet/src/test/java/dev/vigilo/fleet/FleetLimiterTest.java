package dev.vigilo.fleet;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigilo.fleet.LimiterState.Circuit;
import dev.vigilo.llm.ChatCall;
import dev.vigilo.llm.ChatExchange;
import java.net.URI;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * One process's side of a fleet limiter, with the lease played by the test: calls are admitted only from leased
 * permits and slots, held otherwise; the breaker opens locally at once and the failures it absorbs are resent; only
 * a granted probe goes out while the circuit is not closed. Time is a counter the test moves.
 */
class FleetLimiterTest {
    private final AtomicLong nanos = new AtomicLong(1_000_000_000L);
    private final AtomicInteger kicks = new AtomicInteger();
    private final LimiterState.Limits limits = new LimiterState.Limits(600, 0, 2, 2, Duration.ofSeconds(5));
    private final FleetLimiter limiter = new FleetLimiter("k", "e", limits, nanos::get, kicks::incrementAndGet);

    private static ChatCall call() {
        return new ChatCall(
                URI.create("http://127.0.0.1:9/v1/chat/completions"),
                new byte[40],
                Map.of(),
                Optional.empty(),
                Duration.ofSeconds(5),
                10,
                dev.vigilo.llm.ChatLimiter.NONE);
    }

    private static ChatExchange refused() {
        return new ChatExchange(
                ChatExchange.Outcome.CONNECT_FAILED,
                0,
                Optional.empty(),
                new byte[0],
                0,
                Optional.empty(),
                Optional.of(new java.net.ConnectException("refused")));
    }

    private static ChatExchange answered() {
        return new ChatExchange(
                ChatExchange.Outcome.ANSWERED,
                200,
                Optional.empty(),
                "{}".getBytes(),
                2,
                Optional.of(com.fasterxml.jackson.databind.node.JsonNodeFactory.instance.objectNode()),
                Optional.empty());
    }

    private void grant(int requests, int slots, Circuit circuit, boolean probe) {
        LimiterState s = LimiterState.fresh("k", "e", limits, Instant.EPOCH);
        limiter.apply(new LimiterState.Step(
                s, new LimiterState.Grant(requests, 0, slots, probe, circuit, Duration.ZERO, Duration.ZERO)));
    }

    @Test
    void callsGoOnlyOnLeasedPermitsAndSlotsAndWaitersMakeALeaseDue() {
        ChatCall a = call();
        ChatCall b = call();
        ChatCall c = call();
        assertThat(limiter.admit(a)).isEqualTo(FleetLimiter.POLL);
        assertThat(kicks.get()).as("a held call asks for a lease").isPositive();
        FleetLimiter.Request r = limiter.take();
        assertThat(r.want().requests()).isEqualTo(1);
        grant(3, 2, Circuit.CLOSED, false);
        assertThat(limiter.admit(a)).isZero();
        assertThat(limiter.admit(b)).isZero();
        assertThat(limiter.admit(c)).as("two slots in flight").isEqualTo(FleetLimiter.POLL);
        limiter.settle(a, answered());
        assertThat(limiter.admit(c)).isZero();
        assertThat(limiter.waiting()).isZero();
        assertThat(limiter.inFlight()).isEqualTo(2);
    }

    @Test
    void permitsNotUsedWithinTheirLifetimeAreDropped() {
        grant(5, 2, Circuit.CLOSED, false);
        nanos.addAndGet(FleetLimiter.PERMIT_TTL.toNanos() + 1);
        assertThat(limiter.admit(call())).isEqualTo(FleetLimiter.POLL);
    }

    @Test
    void theFailureThatOpensTheCircuitAndThoseMeetingItAreResentNotCharged() {
        grant(10, 2, Circuit.CLOSED, false);
        ChatCall a = call();
        ChatCall b = call();
        limiter.admit(a);
        limiter.admit(b);
        limiter.settle(a, refused());
        assertThat(limiter.resend(a)).as("the first failure is the attempt's").isFalse();
        limiter.settle(b, refused());
        assertThat(limiter.resend(b)).as("the second opened the circuit").isTrue();
        assertThat(limiter.resend(b)).isFalse();
        // While open, calls wait (a hold, never an error), and the next lease reports the failures.
        Duration hold = limiter.admit(b);
        assertThat(hold).isGreaterThan(Duration.ofSeconds(0)).isLessThanOrEqualTo(FleetLimiter.HEARTBEAT);
        FleetLimiter.Request r = limiter.take();
        assertThat(r.report().trailingFailures()).isEqualTo(2);
        assertThat(r.report().lastFailure()).isEqualTo("connection refused or failed");
        assertThat(r.want().requests()).as("a waiter asks for the probe").isEqualTo(1);
    }

    @Test
    void aLeaseTakenBeforeTheFailuresThatOpenedTheCircuitDoesNotCloseIt() {
        grant(10, 2, Circuit.CLOSED, false);
        ChatCall a = call();
        ChatCall b = call();
        limiter.admit(a);
        limiter.admit(b);
        limiter.settle(a, refused());
        FleetLimiter.Request before = limiter.take();
        assertThat(before.report().trailingFailures()).isEqualTo(1);
        nanos.addAndGet(1_000_000);
        limiter.settle(b, refused());
        assertThat(limiter.resend(b)).as("the second opened the circuit").isTrue();
        // The lease whose request was taken before that failure answers with the row's closed circuit.
        grant(10, 2, Circuit.CLOSED, false);
        assertThat(limiter.admit(b))
                .as("still open: the row has not heard of it")
                .isPositive();
        nanos.addAndGet(1_000_000);
        FleetLimiter.Request after = limiter.take();
        assertThat(after.report().trailingFailures()).isEqualTo(1);
        // A lease taken after it that still finds the row closed (another process's probe was answered) closes it.
        grant(10, 2, Circuit.CLOSED, false);
        assertThat(limiter.admit(b)).isZero();
    }

    @Test
    void onlyAGrantedProbeGoesOutAndItsAnswerClosesTheCircuit() {
        grant(10, 2, Circuit.CLOSED, false);
        ChatCall a = call();
        ChatCall b = call();
        limiter.admit(a);
        limiter.admit(b);
        limiter.settle(a, refused());
        limiter.settle(b, refused());
        nanos.addAndGet(1_000_000);
        limiter.take(); // the lease that reports the failures; its grant follows
        grant(0, 2, Circuit.HALF_OPEN, false);
        assertThat(limiter.admit(a)).isPositive();
        grant(0, 2, Circuit.HALF_OPEN, true);
        assertThat(limiter.admit(a)).as("the probe").isZero();
        assertThat(limiter.admit(b)).as("one probe at a time").isPositive();
        limiter.settle(a, answered());
        assertThat(limiter.resend(a)).isFalse();
        assertThat(limiter.take().report().probe()).isEqualTo(LimiterState.Probe.ANSWERED);
        grant(10, 2, Circuit.CLOSED, false);
        assertThat(limiter.admit(b)).isZero();
    }

    @Test
    void aLeaseTakenBeforeTheProbeFailedGrantsNoSecondProbe() {
        grant(0, 2, Circuit.HALF_OPEN, true);
        ChatCall a = call();
        ChatCall b = call();
        assertThat(limiter.admit(a)).as("the probe").isZero();
        limiter.take(); // a lease's request, before the probe's answer
        nanos.addAndGet(1_000_000);
        limiter.settle(a, refused());
        assertThat(limiter.resend(a)).isTrue();
        // That lease answers with the row as it was: half open, the probe this process's.
        grant(0, 2, Circuit.HALF_OPEN, true);
        assertThat(limiter.admit(b)).as("no second probe in one cool-down").isPositive();
        assertThat(limiter.admit(a)).isPositive();
        nanos.addAndGet(1_000_000);
        assertThat(limiter.take().report().probe()).isEqualTo(LimiterState.Probe.FAILED);
    }

    @Test
    void aFailedProbeIsResentAndReopensTheCircuitLocally() {
        grant(0, 2, Circuit.HALF_OPEN, true);
        ChatCall a = call();
        assertThat(limiter.admit(a)).isZero();
        limiter.settle(a, refused());
        assertThat(limiter.resend(a)).isTrue();
        assertThat(limiter.admit(a)).isGreaterThanOrEqualTo(FleetLimiter.POLL);
        assertThat(limiter.take().report().probe()).isEqualTo(LimiterState.Probe.FAILED);
    }
}
