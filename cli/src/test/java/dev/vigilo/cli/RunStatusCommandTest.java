package dev.vigilo.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigilo.plan.CreationLease;
import dev.vigilo.plan.PlanStatus;
import dev.vigilo.plan.RunState;
import dev.vigilo.plan.RunStatus;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** The human {@code run status} view of the creation lease, and what {@code run watch} counts as a change. */
class RunStatusCommandTest {
    private static final UUID RUN = UUID.fromString("11111111-2222-4333-8444-555555555555");
    private static final CreationLease LEASE = new CreationLease(Instant.parse("2026-11-30T05:47:18Z"), 252);

    private static RunStatus status(RunState state, PlanStatus plan, Optional<CreationLease> lease) {
        return new RunStatus(
                RUN,
                state,
                state == RunState.PENDING,
                new RunStatus.CreationProgress(plan, 7),
                lease,
                24,
                List.of(),
                Optional.empty());
    }

    private static String print(RunStatus s) {
        StringWriter out = new StringWriter();
        try (PrintWriter w = new PrintWriter(out)) {
            RunStatusCommand.print(w, s);
        }
        return out.toString();
    }

    @Test
    void aHeldLeaseSaysHowLongUntilItCanBeReclaimedAndWhen() {
        assertThat(print(status(RunState.CREATING, PlanStatus.PREPARING, Optional.of(LEASE))))
                .isEqualTo("run " + RUN + ": creating\n"
                        + "plan: preparing, 7 of 24 chunks acknowledged\n"
                        + "creation lease: held by a creator, reclaimable in 4m 12s, at 2026-11-30T05:47:18Z\n");
    }

    @Test
    void aPreparingRunWithoutALiveLeaseSaysTheCommandResumesIt() {
        assertThat(print(status(RunState.CREATING, PlanStatus.PREPARING, Optional.empty())))
                .contains("creation lease: free; repeat `vigilo run create` with this run id to resume preparation");
        assertThat(print(status(RunState.PENDING, PlanStatus.READY, Optional.empty())))
                .isEqualTo("run " + RUN + ": pending (dispatchable)\n" + "plan: ready, 7 of 24 chunks acknowledged\n");
    }

    @Test
    void watchCountsARenewalAsAChangeButNotTheCountdown() {
        RunStatus before = status(RunState.CREATING, PlanStatus.PREPARING, Optional.of(LEASE));
        RunStatus later =
                status(RunState.CREATING, PlanStatus.PREPARING, Optional.of(new CreationLease(LEASE.expiresAt(), 251)));
        RunStatus renewed = status(
                RunState.CREATING,
                PlanStatus.PREPARING,
                Optional.of(new CreationLease(LEASE.expiresAt().plusSeconds(60), 300)));
        assertThat(later.toJson()).isNotEqualTo(before.toJson());
        assertThat(RunWatchCommand.withoutCountdown(later).toJson())
                .isEqualTo(RunWatchCommand.withoutCountdown(before).toJson());
        assertThat(RunWatchCommand.withoutCountdown(renewed).toJson())
                .isNotEqualTo(RunWatchCommand.withoutCountdown(before).toJson());
    }
}
