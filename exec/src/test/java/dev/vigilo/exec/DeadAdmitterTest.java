package dev.vigilo.exec;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigilo.common.crash.CrashSweep;
import dev.vigilo.exec.admission.Admission;
import dev.vigilo.plan.CreationLeases;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * An admission process halted (as {@code kill -9} leaves it: no finally block, no release) right after its claim,
 * before its first seed commit, leaves the run's creation lease held for minutes by a process that no longer runs; an
 * admission on the same host takes it over at once and activates the run.
 */
class DeadAdmitterTest {
    private static final int CASES = 300;
    /** The admission lease of production: without its holder, a dead admitter's lease is waited out for 5 minutes. */
    private static final long ADMISSION_LEASE_MS = Duration.ofMinutes(5).toMillis();

    @TempDir
    Path dir;

    @Test
    @Timeout(value = 3, unit = TimeUnit.MINUTES)
    void anAdmissionOnTheSameHostTakesOverTheLeaseOfAHaltedAdmitterAtOnce() throws Exception {
        try (ExecFixture fx = new ExecFixture(dir.resolve("fx"), CASES)) {
            UUID run = fx.prepare();
            CrashSweep child =
                    new CrashSweep(ExecWorkloadMain.class.getName(), List.of("-Xmx256m"), dir.resolve("children"));
            // Boundary 1 is the claim itself; boundary 2 the first seed commit, after the claim.
            CrashSweep.Outcome halted = child.haltAt(
                    2,
                    Duration.ofSeconds(120),
                    fx.controlUrl,
                    fx.storeRoot.toString(),
                    run.toString(),
                    "3000",
                    Long.toString(ADMISSION_LEASE_MS));
            assertThat(halted.halted()).as(halted.err()).isTrue();
            assertThat(halted.err()).contains("(exec.admit.seed)");
            assertThat(CreationLeases.owner(fx.control.jdbi(), run)).isNotNull();
            assertThat(fx.runStatus(run)).isEqualTo("creating");

            try (Placements placements = Placements.open(fx.control, ExecutionConfig.defaults())) {
                Admission.Result admitted = new Admission(placements, fx.storage).admit(run);
                assertThat(admitted.outcome()).isEqualTo(Admission.Outcome.ACTIVATED);
                assertThat(admitted.chunks()).isEqualTo(3);
            }
            assertThat(fx.runStatus(run)).isEqualTo("pending");
            assertThat(CreationLeases.owner(fx.control.jdbi(), run)).isNull();
        }
    }
}
