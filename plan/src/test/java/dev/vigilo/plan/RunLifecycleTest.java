package dev.vigilo.plan;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigilo.control.ControlDatabase;
import dev.vigilo.control.ControlSettings;
import dev.vigilo.control.TestPostgres;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;
import org.jdbi.v3.core.Jdbi;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The transitions of {@link RunLifecycle} that the plan's schema carries (create, admit, mark running; settle, fail
 * and cancel write execution's columns and are tested in module exec): each applies only from the states it leaves,
 * reports whether it applied, and changes nothing when it refuses.
 */
class RunLifecycleTest {
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

    /** Runs {@code transition} in a transaction of its own and returns whether it applied. */
    private static boolean applied(java.util.function.Function<org.jdbi.v3.core.Handle, Boolean> transition) {
        Boolean applied = jdbi.inTransaction(transition::apply);
        return applied;
    }

    private static UUID runIn(RunState state) {
        UUID run = UUID.randomUUID();
        // A paused run carries its pause's fields (runs_paused_fields).
        boolean paused = state == RunState.PAUSED;
        jdbi.useHandle(h -> h.createUpdate("INSERT INTO runs (run_id, status, pause_reason, paused_from, paused_at)"
                        + " VALUES (:r, :s, :pr, :pf, CASE WHEN :paused THEN now() END)")
                .bind("r", run)
                .bind("s", state.spelling())
                .bind("pr", paused ? "test" : null)
                .bind("pf", paused ? RunState.RUNNING.spelling() : null)
                .bind("paused", paused)
                .execute());
        return run;
    }

    private static Map<String, Object> row(UUID run) {
        return jdbi.withHandle(h -> h.createQuery(
                        "SELECT status, dispatchable, xmin::text AS version FROM runs" + " WHERE run_id = :r")
                .bind("r", run)
                .mapToMap()
                .one());
    }

    @Test
    void createInsertsACreatingRunOnceAndRefusesAnExistingOne() {
        UUID run = UUID.randomUUID();
        assertThat(applied(h -> RunLifecycle.create(h, run))).isTrue();
        assertThat(row(run)).containsEntry("status", "creating").containsEntry("dispatchable", false);
        Map<String, Object> before = row(run);
        assertThat(applied(h -> RunLifecycle.create(h, run))).isFalse();
        assertThat(row(run)).isEqualTo(before);
    }

    @Test
    void admitMovesOnlyACreatingRunToPendingAndDispatchable() {
        UUID run = runIn(RunState.CREATING);
        assertThat(applied(h -> RunLifecycle.admit(h, run))).isTrue();
        assertThat(row(run)).containsEntry("status", "pending").containsEntry("dispatchable", true);
        for (RunState from : EnumSet.complementOf(EnumSet.of(RunState.CREATING))) {
            UUID other = runIn(from);
            Map<String, Object> before = row(other);
            assertThat(applied(h -> RunLifecycle.admit(h, other)))
                    .as("admit from " + from)
                    .isFalse();
            assertThat(row(other)).as("unchanged from " + from).isEqualTo(before);
        }
    }

    @Test
    void markRunningMovesOnlyAPendingRun() {
        UUID run = runIn(RunState.PENDING);
        assertThat(applied(h -> RunLifecycle.markRunning(h, run))).isTrue();
        assertThat(row(run)).containsEntry("status", "running");
        for (RunState from : EnumSet.complementOf(EnumSet.of(RunState.PENDING))) {
            UUID other = runIn(from);
            Map<String, Object> before = row(other);
            assertThat(applied(h -> RunLifecycle.markRunning(h, other)))
                    .as("mark running from " + from)
                    .isFalse();
            assertThat(row(other)).as("unchanged from " + from).isEqualTo(before);
        }
    }

    @Test
    void theExecutingPredicateSelectsPendingRunningAndPausedRunsOnly() {
        Map<UUID, RunState> runs = new HashMap<>();
        for (RunState s : RunState.values()) {
            runs.put(runIn(s), s);
        }
        var selected = jdbi.withHandle(h -> h.createQuery("SELECT r.run_id FROM runs r WHERE r.run_id = ANY(:ids)"
                        + " AND " + RunLifecycle.executing("r.status"))
                .bindArray("ids", UUID.class, runs.keySet().toArray(UUID[]::new))
                .mapTo(UUID.class)
                .list());
        assertThat(selected.stream().map(runs::get)).containsExactlyInAnyOrderElementsOf(RunLifecycle.EXECUTING);
        assertThat(RunLifecycle.EXECUTING)
                .containsExactlyInAnyOrder(RunState.PENDING, RunState.RUNNING, RunState.PAUSED);
        var runnable = jdbi.withHandle(h -> h.createQuery("SELECT r.run_id FROM runs r WHERE r.run_id = ANY(:ids)"
                        + " AND " + RunLifecycle.runnable("r.status"))
                .bindArray("ids", UUID.class, runs.keySet().toArray(UUID[]::new))
                .mapTo(UUID.class)
                .list());
        assertThat(runnable.stream().map(runs::get)).containsExactlyInAnyOrder(RunState.PENDING, RunState.RUNNING);
    }

    @Test
    void everyStateIsCreatingExecutingOrTerminal() {
        EnumSet<RunState> all = EnumSet.of(RunState.CREATING);
        all.addAll(RunLifecycle.EXECUTING);
        all.addAll(RunLifecycle.TERMINAL);
        assertThat(all).containsExactlyInAnyOrder(RunState.values());
        assertThat(RunLifecycle.EXECUTING).doesNotContainAnyElementsOf(RunLifecycle.TERMINAL);
    }
}
