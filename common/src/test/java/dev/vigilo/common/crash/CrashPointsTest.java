package dev.vigilo.common.crash;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Crash points in real child JVMs: traced, halted at an exact boundary, and inert without the properties. */
class CrashPointsTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(60);

    @TempDir
    Path dir;

    @Test
    void aTraceNamesEveryBoundaryInOrder() {
        CrashSweep sweep = new CrashSweep(BoundariesMain.class.getName(), List.of(), dir);
        assertThat(sweep.trace(TIMEOUT, "4"))
                .containsExactly("test.step-1", "test.step-2", "test.step-3", "test.step-4");
    }

    @Test
    void haltingAtTheNthBoundaryStopsRightThereWithoutShutdownHooks() {
        CrashSweep sweep = new CrashSweep(BoundariesMain.class.getName(), List.of(), dir);
        CrashSweep.Outcome o = sweep.haltAt(3, TIMEOUT, "5");
        assertThat(o.halted()).as(o.err()).isTrue();
        assertThat(o.out()).isEqualTo("after 1\nafter 2\n");
        assertThat(o.err()).contains("halted at crash point 3 (test.step-3)");
    }

    @Test
    void withoutThePropertiesBoundariesDoNothing() {
        assertThat(CrashPoints.enabled()).isFalse();
        CrashPoints.boundary("test.inert");
        CrashSweep.Outcome o =
                new CrashSweep(BoundariesMain.class.getName(), List.of(), dir).run(List.of(), TIMEOUT, "2");
        assertThat(o.exitCode()).isZero();
        assertThat(o.out()).isEqualTo("after 1\nafter 2\nshutdown hook ran\n");
    }

    @Test
    void aHaltPointBeyondTheWorkloadLetsItFinish() {
        CrashSweep.Outcome o = new CrashSweep(BoundariesMain.class.getName(), List.of(), dir).haltAt(9, TIMEOUT, "2");
        assertThat(o.exitCode()).isZero();
    }

    @Test
    void selectionTakesAllUpToTheLimitAndElseASeededSampleWithBothEnds() {
        assertThat(CrashSweep.select(5, 10).points()).containsExactly(1, 2, 3, 4, 5);
        CrashSweep.Selection s = CrashSweep.select(1000, 20);
        assertThat(s.all()).isFalse();
        assertThat(s.points()).hasSize(20).contains(1, 1000).isSorted().doesNotHaveDuplicates();
        assertThat(s.points()).allSatisfy(p -> assertThat(p).isBetween(1, 1000));
    }

    @Test
    void aSelectionAroundRareStepsHaltsAtEachStepAndItsNeighboursAndFillsAtRandom() {
        List<String> names = new java.util.ArrayList<>();
        for (int i = 0; i < 300; i++) {
            names.add(i == 99 || i == 199 ? "step" : "write"); // boundaries 100 and 200
        }
        CrashSweep.Selection s = CrashSweep.selectAroundRareSteps(names, 2, 20);
        assertThat(s.all()).isFalse();
        assertThat(s.points())
                .hasSize(20)
                .contains(1, 97, 98, 99, 100, 101, 197, 198, 199, 200, 201, 300)
                .isSorted();
        assertThat(CrashSweep.selectAroundRareSteps(names.subList(0, 15), 1, 20).all())
                .isTrue();
    }
}
