package dev.vigilo.plan;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vigilo.control.ControlDatabase;
import dev.vigilo.control.ControlSettings;
import dev.vigilo.control.TestPostgres;
import java.util.Arrays;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jdbi.v3.core.Handle;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The enums' spellings are the only ones the control database admits: each state column's check constraint lists
 * exactly the enum's spellings, and every spelling round-trips.
 */
class StateSpellingsTest {
    static ControlDatabase control;

    @BeforeAll
    static void open() {
        control = ControlDatabase.open(new ControlSettings.Jdbc(TestPostgres.newDatabaseUrl()));
    }

    @AfterAll
    static void close() {
        control.close();
    }

    /** The quoted literals of a check constraint, e.g. {@code status IN ('a', 'b')} gives a, b. */
    private static Set<String> admitted(String constraint) {
        String def = control.jdbi()
                .withHandle(h -> h.createQuery("SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE conname = :n")
                        .bind("n", constraint)
                        .mapTo(String.class)
                        .one());
        Set<String> literals = new TreeSet<>();
        Matcher m = Pattern.compile("'([^']*)'").matcher(def);
        while (m.find()) {
            literals.add(m.group(1));
        }
        return literals;
    }

    private static Set<String> spellings(Enum<?>[] values, java.util.function.Function<Object, String> spelling) {
        Set<String> out = new TreeSet<>();
        Arrays.stream(values).forEach(v -> out.add(spelling.apply(v)));
        return out;
    }

    @Test
    void eachStateColumnAdmitsExactlyItsEnumsSpellings() {
        assertThat(admitted("runs_status_check"))
                .isEqualTo(spellings(RunState.values(), v -> ((RunState) v).spelling()));
        assertThat(admitted("run_plans_plan_status_check"))
                .isEqualTo(spellings(PlanStatus.values(), v -> ((PlanStatus) v).spelling()));
        assertThat(admitted("run_plan_objects_kind_check"))
                .isEqualTo(spellings(PlanFileKind.values(), v -> ((PlanFileKind) v).spelling()));
    }

    @Test
    void runsStoreEveryRunStateAndNothingElse() {
        for (RunState state : RunState.values()) {
            control.jdbi()
                    .useHandle(h -> assertThat(insertRun(h, state.spelling()))
                            .as(state.name())
                            .isEqualTo(1));
        }
        assertThatThrownBy(() -> control.jdbi().useHandle(h -> insertRun(h, "suspended")))
                .hasMessageContaining("runs_status_check");
    }

    private static int insertRun(Handle h, String status) {
        // A paused run carries its pause's fields (runs_paused_fields); no other run may.
        boolean paused = status.equals(RunState.PAUSED.spelling());
        return h.createUpdate("INSERT INTO runs (run_id, status, pause_reason, paused_from, paused_at)"
                        + " VALUES (:r, :s, :pr, :pf, CASE WHEN :paused THEN now() END)")
                .bind("r", UUID.randomUUID())
                .bind("s", status)
                .bind("pr", paused ? "test" : null)
                .bind("pf", paused ? "running" : null)
                .bind("paused", paused)
                .execute();
    }

    @Test
    void spellingsRoundTripAndPrintAsThemselves() {
        for (RunState s : RunState.values()) {
            assertThat(RunState.fromSpelling(s.spelling())).isSameAs(s);
            assertThat(s).hasToString(s.spelling());
            assertThat(s.spelling()).isEqualTo(s.name().toLowerCase(java.util.Locale.ROOT));
        }
        for (PlanStatus s : PlanStatus.values()) {
            assertThat(PlanStatus.fromSpelling(s.spelling())).isSameAs(s);
            assertThat(s).hasToString(s.spelling());
            assertThat(s.isFinal()).isEqualTo(s != PlanStatus.PREPARING);
        }
        assertThatThrownBy(() -> RunState.fromSpelling("Creating")).hasMessageContaining("unknown run status");
        assertThatThrownBy(() -> PlanStatus.fromSpelling("done")).hasMessageContaining("unknown plan status");
    }
}
