package dev.vigilo.exec;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigilo.control.ControlDatabase;
import dev.vigilo.control.ControlSettings;
import dev.vigilo.control.TestPostgres;
import dev.vigilo.plan.RunLifecycle;
import dev.vigilo.plan.RunState;
import dev.vigilo.plan.RunVerdict;
import java.util.EnumSet;
import java.util.Map;
import java.util.UUID;
import java.util.function.Function;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Jdbi;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The transitions that end a run ({@link RunLifecycle#settle}, {@link RunLifecycle#fail}, {@link
 * RunLifecycle#cancel}), on the control schema with execution's columns (verdict, failure reason, end time): each
 * applies only from the states it leaves, records what it says, and refuses a run that already ended without
 * changing its row, so an ended run's verdict or reason is never overwritten.
 */
class RunEndingsTest {
    static ControlDatabase control;
    static Jdbi jdbi;

    @BeforeAll
    static void open() {
        control = ControlDatabase.open(new ControlSettings.Jdbc(TestPostgres.newDatabaseUrl()));
        jdbi = control.jdbi();
    }

    @AfterAll
    static void close() {
        control.close();
    }

    private static boolean applied(Function<Handle, Boolean> transition) {
        Boolean applied = jdbi.inTransaction(transition::apply);
        return applied;
    }

    /** A run in {@code state}, dispatchable when executing, with a verdict when settled and a live creation lease. */
    private static UUID runIn(RunState state) {
        UUID run = UUID.randomUUID();
        boolean paused = state == RunState.PAUSED;
        jdbi.useHandle(h -> h.createUpdate("INSERT INTO runs (run_id, status, dispatchable, verdict, creation_owner,"
                        + " creation_lease_expires_at, pause_reason, paused_from, paused_at)"
                        + " VALUES (:r, :s, :d, :v, :o, now() + interval '5 minutes', :pr, :pf,"
                        + " CASE WHEN :paused THEN now() END)")
                .bind("r", run)
                .bind("s", state.spelling())
                .bind("d", RunLifecycle.EXECUTING.contains(state) && !paused)
                .bind("pr", paused ? "test" : null)
                .bind("pf", paused ? RunState.RUNNING.spelling() : null)
                .bind("paused", paused)
                .bind("v", state == RunState.SETTLED ? RunVerdict.PASSED.spelling() : null)
                .bind("o", UUID.randomUUID())
                .execute());
        return run;
    }

    private static Map<String, Object> row(UUID run) {
        return jdbi.withHandle(h -> h.createQuery("SELECT status, dispatchable, verdict, failure_reason,"
                        + " finished_at IS NOT NULL AS finished, creation_owner IS NOT NULL AS leased,"
                        + " xmin::text AS version FROM runs WHERE run_id = :r")
                .bind("r", run)
                .mapToMap()
                .one());
    }

    @Test
    void settleRecordsTheVerdictOfAnExecutingRunOnly() {
        for (RunState from : RunLifecycle.EXECUTING) {
            UUID run = runIn(from);
            assertThat(applied(h -> RunLifecycle.settle(h, run, RunVerdict.FAILED)))
                    .as("settle from " + from)
                    .isTrue();
            assertThat(row(run))
                    .containsEntry("status", "settled")
                    .containsEntry("verdict", "failed")
                    .containsEntry("dispatchable", false)
                    .containsEntry("finished", true);
        }
        for (RunState from : EnumSet.complementOf(EnumSet.copyOf(RunLifecycle.EXECUTING))) {
            UUID run = runIn(from);
            Map<String, Object> before = row(run);
            assertThat(applied(h -> RunLifecycle.settle(h, run, RunVerdict.FAILED)))
                    .as("settle from " + from)
                    .isFalse();
            assertThat(row(run)).as("unchanged from " + from).isEqualTo(before);
        }
    }

    @Test
    void pauseLeavesPendingOrRunningAndResumeReturnsThere() {
        for (RunState from : RunLifecycle.PAUSABLE) {
            UUID run = runIn(from);
            assertThat(applied(h -> RunLifecycle.pause(h, run, "why")))
                    .as("pause from " + from)
                    .isTrue();
            assertThat(row(run))
                    .containsEntry("status", "paused")
                    .containsEntry("dispatchable", false)
                    .containsEntry("finished", false);
            assertThat(applied(h -> RunLifecycle.pause(h, run, "again"))).isFalse();
            assertThat(applied(h -> RunLifecycle.resume(h, run)))
                    .as("resume to " + from)
                    .isTrue();
            assertThat(row(run))
                    .containsEntry("status", from.spelling())
                    .containsEntry("dispatchable", true)
                    .containsEntry("finished", false);
        }
        for (RunState from : EnumSet.complementOf(EnumSet.copyOf(RunLifecycle.PAUSABLE))) {
            UUID run = runIn(from);
            Map<String, Object> before = row(run);
            assertThat(applied(h -> RunLifecycle.pause(h, run, "why")))
                    .as("pause from " + from)
                    .isFalse();
            assertThat(row(run)).as("unchanged from " + from).isEqualTo(before);
            if (from != RunState.PAUSED) {
                assertThat(applied(h -> RunLifecycle.resume(h, run)))
                        .as("resume from " + from)
                        .isFalse();
                assertThat(row(run)).as("unchanged from " + from).isEqualTo(before);
            }
        }
    }

    @Test
    void failRecordsTheReasonOfARunThatHasNotEnded() {
        for (RunState from : EnumSet.complementOf(EnumSet.copyOf(RunLifecycle.TERMINAL))) {
            UUID run = runIn(from);
            assertThat(applied(h -> RunLifecycle.fail(h, run, "chunk 3 failed")))
                    .as("fail from " + from)
                    .isTrue();
            assertThat(row(run))
                    .containsEntry("status", "failed")
                    .containsEntry("failure_reason", "chunk 3 failed")
                    .containsEntry("verdict", null)
                    .containsEntry("dispatchable", false)
                    .containsEntry("finished", true);
        }
        for (RunState from : RunLifecycle.TERMINAL) {
            UUID run = runIn(from);
            Map<String, Object> before = row(run);
            assertThat(applied(h -> RunLifecycle.fail(h, run, "late")))
                    .as("fail from " + from)
                    .isFalse();
            assertThat(row(run)).as("unchanged from " + from).isEqualTo(before);
        }
    }

    @Test
    void cancelEndsEveryAuthorityOverARunThatHasNotEnded() {
        for (RunState from : EnumSet.complementOf(EnumSet.copyOf(RunLifecycle.TERMINAL))) {
            UUID run = runIn(from);
            assertThat(applied(h -> RunLifecycle.cancel(h, run)))
                    .as("cancel from " + from)
                    .isTrue();
            assertThat(row(run))
                    .containsEntry("status", "cancelled")
                    .containsEntry("dispatchable", false)
                    .containsEntry("leased", false)
                    .containsEntry("finished", true);
        }
        for (RunState from : RunLifecycle.TERMINAL) {
            UUID run = runIn(from);
            Map<String, Object> before = row(run);
            assertThat(applied(h -> RunLifecycle.cancel(h, run)))
                    .as("cancel from " + from)
                    .isFalse();
            assertThat(row(run)).as("unchanged from " + from).isEqualTo(before);
        }
    }
}
