package dev.vigilo.fleet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.vigilo.fleet.LimiterState.Circuit;
import dev.vigilo.fleet.LimiterState.Grant;
import dev.vigilo.fleet.LimiterState.Limits;
import dev.vigilo.fleet.LimiterState.Probe;
import dev.vigilo.fleet.LimiterState.Report;
import dev.vigilo.fleet.LimiterState.Want;
import java.time.Duration;
import java.time.Instant;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** The fleet limiter's one transition: token buckets, the adaptive rate and the breaker, time given by the test. */
class LimiterStateTest {
    static final Instant T0 = Instant.parse("2026-12-02T10:00:00Z");
    static final UUID A = UUID.randomUUID();
    static final UUID B = UUID.randomUUID();
    static final Limits RPM_600 = new Limits(600, 0, 0, 3, Duration.ofSeconds(30));

    private LimiterState state = LimiterState.fresh("k", "e", RPM_600, T0);

    private Grant lease(Instant at, UUID holder, int requests) {
        return lease(at, holder, Report.NONE, new Want(requests, 0, 0, 0));
    }

    private Grant lease(Instant at, UUID holder, Report report, Want want) {
        LimiterState.Step s = state.step(at, holder, state.limits(), report, want, 0);
        state = s.state();
        return s.grant();
    }

    private static Report failures(int n) {
        return new Report(0, false, n, "connection refused or failed", 0, Duration.ZERO, 0, 0, Probe.NONE, 0);
    }

    private static Report answered(int n, long latencyMillis) {
        return new Report(n, true, 0, "", 0, Duration.ZERO, latencyMillis * n, n, Probe.NONE, 0);
    }

    @Test
    void theBucketGrantsItsBurstThenTheRateAndNeverMore() {
        // 600/min = 10/s; the bucket holds one second's worth.
        assertThat(lease(T0, A, 50).requests()).isEqualTo(10);
        assertThat(lease(T0, B, 5).requests()).isZero();
        Grant empty = lease(T0, B, 1);
        assertThat(empty.nextIn()).isEqualTo(Duration.ofMillis(100));
        long granted = 0;
        // Two processes asking every 50 ms for a minute get a minute's rate between them, not more.
        for (int ms = 50; ms <= 60_000; ms += 50) {
            granted += lease(T0.plusMillis(ms), ms % 100 == 0 ? A : B, 3).requests();
        }
        assertThat(granted).isBetween(599L, 600L);
    }

    @Test
    void idleTimeDoesNotStockpileBeyondTheBurst() {
        lease(T0, A, 10);
        assertThat(lease(T0.plus(Duration.ofMinutes(10)), A, 1000).requests()).isEqualTo(10);
    }

    @Test
    void tokensAreChargedByEstimateAndCorrectedByTheDebtReported() {
        state = LimiterState.fresh("k", "e", new Limits(0, 6000, 0, 3, Duration.ofSeconds(30)), T0);
        // 100 tokens/s, bucket of 100: a batch of estimates may go over once (a debt), then waits for the refill.
        assertThat(lease(T0, A, Report.NONE, new Want(3, 150, 0, 0)).tokens()).isEqualTo(150);
        assertThat(state.tokenPermits()).isEqualTo(-50, within(1e-9));
        Grant none = lease(T0.plusMillis(100), A, Report.NONE, new Want(1, 10, 0, 0));
        assertThat(none.requests()).isZero();
        assertThat(none.nextIn()).isBetween(Duration.ofMillis(409), Duration.ofMillis(411));
        // The answers used 30 tokens fewer than estimated: given back.
        Report refund = new Report(3, true, 0, "", 0, Duration.ZERO, 0, 0, Probe.NONE, -30);
        lease(T0.plusMillis(200), A, refund, new Want(0, 0, 0, 0));
        assertThat(state.tokenPermits()).isEqualTo(0, within(1e-9));
    }

    @Test
    void inFlightSlotsAreSharedAndNeverTakenFromCallsInFlight() {
        state = LimiterState.fresh("k", "e", new Limits(0, 0, 10, 3, Duration.ofSeconds(30)), T0);
        assertThat(state.step(T0, A, state.limits(), Report.NONE, new Want(0, 0, 8, 0), 0)
                        .grant()
                        .inFlight())
                .isEqualTo(8);
        assertThat(state.step(T0, B, state.limits(), Report.NONE, new Want(0, 0, 8, 0), 8)
                        .grant()
                        .inFlight())
                .isEqualTo(2);
        LimiterState unbounded = LimiterState.fresh("k", "e", RPM_600, T0);
        assertThat(unbounded
                        .step(T0, A, RPM_600, Report.NONE, new Want(1, 0, 5, 0), 0)
                        .grant()
                        .inFlight())
                .as("without max_in_flight no slots are held")
                .isZero();
        // B already has 5 in flight (others took slots since): it keeps them, gets no more.
        assertThat(state.step(T0, B, state.limits(), Report.NONE, new Want(0, 0, 9, 5), 8)
                        .grant()
                        .inFlight())
                .isEqualTo(5);
    }

    @Test
    void a429HalvesTheFleetsRateAndPausesForItsRetryAfterThenHealthyAnswersRecoverIt() {
        lease(T0, A, 10);
        Report storm = new Report(0, false, 0, "", 4, Duration.ofSeconds(3), 0, 0, Probe.NONE, 0);
        Grant paused = lease(T0.plusSeconds(1), A, storm, new Want(5, 0, 0, 0));
        assertThat(paused.requests()).isZero();
        assertThat(paused.nextIn()).isEqualTo(Duration.ofSeconds(3));
        assertThat(state.rateFactor()).isEqualTo(0.5);
        assertThat(state.rateReason()).isEqualTo("429 Too Many Requests (Retry-After 3 s): rate lowered");
        assertThat(state.requestsPerSecond()).isEqualTo(5.0);
        // More 429s of the same storm within two seconds do not halve it again.
        lease(T0.plusMillis(1500), B, storm, new Want(0, 0, 0, 0));
        assertThat(state.rateFactor()).isEqualTo(0.5);
        lease(T0.plusSeconds(4), B, storm, new Want(0, 0, 0, 0));
        assertThat(state.rateFactor()).isEqualTo(0.25);
        // Healthy answers: +0.1 at most every 10 s after the last change.
        lease(T0.plusSeconds(10), A, answered(5, 100), new Want(0, 0, 0, 0));
        assertThat(state.rateFactor()).isEqualTo(0.25);
        lease(T0.plusSeconds(14), A, answered(5, 100), new Want(0, 0, 0, 0));
        assertThat(state.rateFactor()).isEqualTo(0.35, within(1e-9));
        assertThat(state.rateReason()).isEqualTo("answers healthy: rate raised");
        for (int s = 24; s <= 104; s += 10) {
            lease(T0.plusSeconds(s), A, answered(5, 100), new Want(0, 0, 0, 0));
        }
        assertThat(state.rateFactor()).isEqualTo(1.0);
        assertThat(state.rateReason()).isEqualTo("answers healthy: back to the configured rate");
    }

    @Test
    void aSustainedLatencyRiseLowersTheRate() {
        for (int s = 0; s < 5; s++) {
            lease(T0.plusSeconds(s), A, answered(10, 200), new Want(0, 0, 0, 0));
        }
        assertThat(state.latencyBaselineMs())
                .hasValueSatisfying(b -> assertThat(b).isEqualTo(200, within(1e-9)));
        lease(T0.plusSeconds(6), A, answered(10, 900), new Want(0, 0, 0, 0));
        assertThat(state.rateFactor()).isEqualTo(0.7, within(1e-9));
        assertThat(state.rateReason()).isEqualTo("latency rose from 200 ms to 900 ms: rate lowered");
        // Too few samples say nothing.
        lease(T0.plusSeconds(9), A, answered(2, 5000), new Want(0, 0, 0, 0));
        assertThat(state.rateFactor()).isEqualTo(0.7, within(1e-9));
    }

    @Test
    void consecutiveFailuresAcrossProcessesOpenTheCircuitAndAnAnswerInBetweenResetsTheCount() {
        lease(T0, A, failures(2), new Want(1, 0, 0, 0));
        assertThat(state.circuit()).isEqualTo(Circuit.CLOSED);
        // B saw an answer after one failure: the count in a row is B's trailing one.
        lease(
                T0.plusSeconds(1),
                B,
                new Report(1, true, 1, "HTTP 503", 0, Duration.ZERO, 10, 1, Probe.NONE, 0),
                new Want(0, 0, 0, 0));
        assertThat(state.consecutiveFailures()).isEqualTo(1);
        Grant opened = lease(T0.plusSeconds(2), A, failures(2), new Want(1, 0, 0, 0));
        assertThat(state.circuit()).isEqualTo(Circuit.OPEN);
        assertThat(state.circuitSince()).isEqualTo(T0.plusSeconds(2));
        assertThat(state.circuitReason())
                .isEqualTo("3 connection failures or 5xx in a row (last: connection refused or failed)");
        assertThat(opened.requests()).isZero();
        assertThat(opened.circuit()).isEqualTo(Circuit.OPEN);
        assertThat(opened.openFor()).isEqualTo(Duration.ofSeconds(30));
        // During the cool-down nothing is granted, to anyone.
        assertThat(lease(T0.plusSeconds(20), B, 5).requests()).isZero();
    }

    @Test
    void afterTheCoolDownOneProcessProbesAndItsAnswerClosesTheCircuit() {
        lease(T0, A, failures(3), new Want(1, 0, 0, 0));
        Instant cooled = T0.plusSeconds(30);
        Grant probeA = lease(cooled, A, 1);
        assertThat(probeA.probe()).isTrue();
        assertThat(probeA.requests()).isZero();
        assertThat(state.circuit()).isEqualTo(Circuit.HALF_OPEN);
        Grant probeB = lease(cooled.plusSeconds(1), B, 1);
        assertThat(probeB.probe()).as("one probe fleet-wide").isFalse();
        assertThat(probeB.circuit()).isEqualTo(Circuit.HALF_OPEN);
        Report ok = new Report(1, true, 0, "", 0, Duration.ZERO, 20, 1, Probe.ANSWERED, 0);
        Grant closed = lease(cooled.plusSeconds(2), A, ok, new Want(3, 0, 0, 0));
        assertThat(closed.circuit()).isEqualTo(Circuit.CLOSED);
        assertThat(closed.requests()).isEqualTo(3);
        assertThat(state.circuitReason()).isEqualTo("the half-open probe was answered");
        assertThat(state.consecutiveFailures()).isZero();
    }

    @Test
    void aFailedProbeReopensAndACrashedProbersClaimPassesOn() {
        lease(T0, A, failures(3), new Want(1, 0, 0, 0));
        Instant cooled = T0.plusSeconds(30);
        assertThat(lease(cooled, A, 1).probe()).isTrue();
        Report failed = new Report(0, false, 1, "connect timeout", 0, Duration.ZERO, 0, 0, Probe.FAILED, 0);
        lease(cooled.plusSeconds(1), A, failed, new Want(1, 0, 0, 0));
        assertThat(state.circuit()).isEqualTo(Circuit.OPEN);
        assertThat(state.circuitReason()).isEqualTo("the half-open probe failed (connect timeout)");
        assertThat(state.openUntil()).contains(cooled.plusSeconds(31));
        // A claims the next probe and dies; after the claim lapses (one cool-down), B may probe.
        assertThat(lease(cooled.plusSeconds(31), A, 1).probe()).isTrue();
        assertThat(lease(cooled.plusSeconds(40), B, 1).probe()).isFalse();
        assertThat(lease(cooled.plusSeconds(61), B, 1).probe()).isTrue();
    }

    @Test
    void aLimitChangedByAnotherRunAppliesFromTheNextLease() {
        lease(T0, A, 10);
        Limits slower = new Limits(60, 0, 0, 3, Duration.ofSeconds(30));
        LimiterState.Step s = state.step(T0.plusSeconds(10), A, slower, Report.NONE, new Want(5, 0, 0, 0), 0);
        assertThat(s.grant().requests()).isEqualTo(1);
        assertThat(s.state().limits()).isEqualTo(slower);
    }
}
