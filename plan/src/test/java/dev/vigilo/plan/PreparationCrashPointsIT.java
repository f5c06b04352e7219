package dev.vigilo.plan;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigilo.common.crash.CrashSweep;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Crash-point sweep of run preparation and publication: a real {@code run create} process ({@link CreateMain}) over a
 * small dataset, in groups of a few files, is halted at one durable boundary (the claim, a group's registration, a
 * plan file's temporary write, link or temporary-file removal, an acknowledgement, the publication commit, after
 * it, the lease's release); the same creation is then repeated in this JVM (waiting out the dead creator's lease)
 * and publishes plan files byte-equal to an uninterrupted run's (same run id and upload id, its own database and
 * store), with the same shard rows.
 */
class PreparationCrashPointsIT {
    static final int LIMIT = 100;
    static final int CASES = 700;
    static final UUID UPLOAD = UUID.fromString("00000000-0000-4000-8000-0000000000c6");
    static final long LEASE_MILLIS = 1500;
    static final Duration CHILD_TIMEOUT = Duration.ofSeconds(120);

    @TempDir
    Path dir;

    @Test
    @Timeout(value = 30, unit = TimeUnit.MINUTES) // the exhaustive sweep; the default selection takes minutes
    void aCreationHaltedAtAnyDurableBoundaryRepeatsIntoTheSamePlan() throws Exception {
        UUID run = UUID.randomUUID();
        Path profile = Files.writeString(dir.resolve("profile.yaml"), PlanFixture.PROFILE);
        CrashSweep sweep = new CrashSweep(CreateMain.class.getName(), List.of("-Xmx256m"), dir.resolve("children"));
        try (PlanFixture clean = new PlanFixture(dir.resolve("clean"), CASES, UPLOAD)) {
            List<String> boundaries = sweep.trace(CHILD_TIMEOUT, args(clean, run, profile));
            System.out.println("preparation boundaries: " + countByName(boundaries));
            TreeMap<String, byte[]> expected = clean.planFiles(run);
            RunStatus cleanStatus = new RunStatusReader(clean.control.jdbi()).status(run);
            assertThat(expected).as("the uninterrupted run published its plan").isNotEmpty();

            CrashSweep.Selection selection = CrashSweep.select(boundaries.size(), LIMIT);
            Map<Integer, PlanFixture> fixtures = new ConcurrentHashMap<>();
            List<String> waitedForLease = new ArrayList<>();
            CrashSweep.forEach(
                    selection,
                    CrashSweep.parallelism(),
                    point -> {
                        PlanFixture fx = new PlanFixture(dir.resolve("halt-" + point), CASES, UPLOAD);
                        fixtures.put(point, fx);
                        CrashSweep.Outcome o = sweep.haltAt(point, CHILD_TIMEOUT, args(fx, run, profile));
                        // Let the dead creator's lease run out here, in parallel, rather than in the serial check.
                        Thread.sleep(LEASE_MILLIS);
                        return o;
                    },
                    (point, halted) -> {
                        String where = "boundary " + point + " (" + boundaries.get(point - 1) + "), " + selection;
                        try (PlanFixture fx = fixtures.remove(point)) {
                            assertThat(halted.halted())
                                    .as(where + ": " + halted.err() + halted.out())
                                    .isTrue();
                            if (repeat(fx, run, profile)) {
                                waitedForLease.add(boundaries.get(point - 1));
                            }
                            PreparationTest.assertIdentical(expected, fx.planFiles(run));
                            RunStatus status = new RunStatusReader(fx.control.jdbi()).status(run);
                            assertThat(status.shards()).as(where).isEqualTo(cleanStatus.shards());
                            assertThat(status.creationProgress().planStatus())
                                    .as(where)
                                    .isEqualTo(PlanStatus.READY);
                        }
                    });
            System.out.println("preparation crash sweep: " + selection.points().size() + " halts of "
                    + boundaries.size() + " boundaries; repeats that waited for the dead creator's lease: "
                    + waitedForLease.size());
        }
    }

    /** Repeats the creation until the dead creator's lease has expired; whether it had to wait. */
    private static boolean repeat(PlanFixture fx, UUID run, Path profile) throws InterruptedException {
        return fx.repeatUntilLeaseExpired(run, UPLOAD, profile, LEASE_MILLIS, 200);
    }

    private static String[] args(PlanFixture fx, UUID run, Path profile) {
        return new String[] {
            fx.url,
            fx.storeRoot.toString(),
            UPLOAD.toString(),
            run.toString(),
            profile.toString(),
            Long.toString(LEASE_MILLIS),
            "4",
            "0"
        };
    }

    private static Map<String, Integer> countByName(List<String> names) {
        Map<String, Integer> counts = new LinkedHashMap<>();
        names.forEach(n -> counts.merge(n, 1, Integer::sum));
        return counts;
    }
}
