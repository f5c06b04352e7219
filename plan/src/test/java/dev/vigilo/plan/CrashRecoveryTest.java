package dev.vigilo.plan;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigilo.common.crash.RandomKills;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Kills real {@code run create} processes ({@link CreateMain}, SIGKILL) at random moments of their work (after their
 * claim of the creation lease, within the duration of an uninterrupted creation), in two independent sequences at a
 * time, each on a database and store of its own. After each sequence the same creation is repeated until it
 * publishes, and every plan file is compared with an uninterrupted run's (same run id and upload id, separate
 * database and store), with the same shard rows.
 *
 * <p>{@value RandomKills#POINTS}{@code =N} makes N kills; the seed of the kill moments is printed.
 */
class CrashRecoveryTest {
    static final int DEFAULT_KILLS = 20;
    static final int LANES = 2;
    static final int CASES = 3_000;
    static final UUID UPLOAD = UUID.fromString("00000000-0000-4000-8000-0000000000c5");
    static final long LEASE_MILLIS = 1500;
    static final Duration CHILD_TIMEOUT = Duration.ofSeconds(120);

    @TempDir
    Path dir;

    private Path profile;
    private PlanFixture clean;
    private final TreeMap<UUID, TreeMap<String, byte[]>> references = new TreeMap<>();

    /** How an uninterrupted child creation spends its time. */
    private record Timing(long startupMillis, long workMillis) {}

    @Test
    @Timeout(value = 20, unit = TimeUnit.MINUTES) // -Dvigilo.kill.points=N runs longer
    void killNineAtRandomPointsThenRepeatPublishesAByteIdenticalPlan() throws Exception {
        RandomKills kills = RandomKills.configure("plan CrashRecoveryTest", DEFAULT_KILLS);
        profile = Files.writeString(dir.resolve("profile.yaml"), PlanFixture.PROFILE);
        try (PlanFixture fx = new PlanFixture(dir.resolve("clean"), CASES, UPLOAD)) {
            clean = fx;
            Timing timing = measure();
            System.out.println("uninterrupted creation: start-up " + timing.startupMillis() + " ms, work "
                    + timing.workMillis() + " ms");
            List<String> log = Collections.synchronizedList(new ArrayList<>());
            RandomKills.lanes(LANES, LANES, lane -> {
                try (PlanFixture crashed = new PlanFixture(dir.resolve("lane-" + lane), CASES, UPLOAD)) {
                    lane(lane, kills.share(lane, LANES), kills.random(lane), crashed, timing, log);
                }
            });
            System.out.println(kills + ":\n  " + String.join("\n  ", log));
            assertThat(log.stream().filter(l -> l.contains(" killed ")).count())
                    .as("%s: %s", kills, log)
                    .isEqualTo(kills.points());
        }
    }

    /**
     * One sequence of kills on its own database and store: runs {@code run create} children and kills each at a
     * random moment of its work; a child that publishes before its kill ends the run, which is then compared and a
     * new run started; after the last kill the creation is repeated to the end and compared.
     */
    private void lane(int lane, int target, Random random, PlanFixture fx, Timing timing, List<String> log)
            throws Exception {
        UUID run = UUID.randomUUID();
        int killed = 0;
        int attempt = 0;
        while (killed < target) {
            String where = "lane " + lane + " run " + run + " attempt " + attempt++;
            UUID current = run;
            String before = CreationLeases.owner(fx.control.jdbi(), current);
            Path out = dir.resolve("lane-" + lane + "-" + attempt + ".txt");
            Process p = start(fx, current, out);
            boolean claimed = RandomKills.awaitWhileAlive(p, CHILD_TIMEOUT, where + " to claim", () -> {
                String now = CreationLeases.owner(fx.control.jdbi(), current);
                return now != null && !now.equals(before);
            });
            if (!claimed) {
                int exit = p.waitFor();
                assertThat(exit)
                        .as(where + " ended before claiming: " + Files.readString(out))
                        .isIn(0, 3);
                log.add(where + " ended " + exit + " before its claim (3: the dead creator's lease was live)");
                if (exit == 0) {
                    compare(fx, run, where);
                    run = UUID.randomUUID();
                }
                continue;
            }
            long claimedAt = System.nanoTime();
            long delay = RandomKills.delayWithin(random, timing.workMillis());
            if (RandomKills.killAfter(p, delay)) {
                killed++;
                log.add(where + " killed " + RandomKills.millisSince(claimedAt) + " ms after its claim, plan "
                        + cursor(fx, run));
                // The next creator starts so that it claims about when the dead one's lease runs out (when it
                // comes too early, the live lease refuses it and it exits 3).
                CreationLeases.awaitEnd(
                        fx.control.jdbi(), run, timing.startupMillis(), CHILD_TIMEOUT, "the dead creator");
            } else if (p.exitValue() == 5) {
                // Fenced: the machine stalled this creator past its 1.5 s lease before it renewed it. It wrote
                // nothing after, and the next attempt resumes the same run, as a repeat after a kill does.
                log.add(where + " lost its lease before its kill (stalled past " + LEASE_MILLIS + " ms)");
            } else {
                assertThat(p.exitValue())
                        .as(where + ": " + Files.readString(out))
                        .isZero();
                log.add(where + " published before its kill at " + delay + " ms of work");
                compare(fx, run, where);
                run = UUID.randomUUID();
            }
        }
        boolean waited = repeat(fx, run);
        log.add("lane " + lane + " run " + run + " repeated to publication"
                + (waited ? " (after the dead creator's lease ran out)" : ""));
        compare(fx, run, "lane " + lane + " run " + run);
    }

    /** The uninterrupted creation of a child, timed from its start to its claim and from its claim to its end. */
    private Timing measure() throws Exception {
        UUID run = UUID.randomUUID();
        long start = System.nanoTime();
        Process p = start(clean, run, dir.resolve("measure.txt"));
        assertThat(RandomKills.awaitWhileAlive(
                        p, CHILD_TIMEOUT, "the claim", () -> CreationLeases.owner(clean.control.jdbi(), run) != null))
                .isTrue();
        long claimed = System.nanoTime();
        assertThat(p.waitFor(CHILD_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        assertThat(p.exitValue())
                .as(Files.readString(dir.resolve("measure.txt")))
                .isZero();
        return new Timing((claimed - start) / 1_000_000, RandomKills.millisSince(claimed));
    }

    /** The repeated creation published plan files byte-equal to an uninterrupted run's, and the same shard rows. */
    private void compare(PlanFixture fx, UUID run, String where) {
        PreparationTest.assertIdentical(reference(run), fx.planFiles(run));
        RunStatus status = new RunStatusReader(fx.control.jdbi()).status(run);
        assertThat(status.status()).as(where).isEqualTo(RunState.CREATING);
        assertThat(status.creationProgress().planStatus()).as(where).isEqualTo(PlanStatus.READY);
        assertThat(status.creationProgress().planChunkCursor()).as(where).isEqualTo(status.expectedChunks());
        assertThat(status.shards())
                .as(where)
                .isEqualTo(new RunStatusReader(clean.control.jdbi()).status(run).shards());
    }

    /** The plan files of an uninterrupted creation of {@code run} (in this JVM, in the clean database and store). */
    private synchronized TreeMap<String, byte[]> reference(UUID run) {
        return references.computeIfAbsent(run, r -> {
            clean.preparation(PlanFixture.fast())
                    .create(new CreateRequest(ProfileInput.file(profile), UPLOAD, Optional.of(r), false));
            return clean.planFiles(r);
        });
    }

    /** Repeats the creation in this JVM until the dead creator's lease has expired; whether it had to wait. */
    private boolean repeat(PlanFixture fx, UUID run) throws InterruptedException {
        return fx.repeatUntilLeaseExpired(run, UPLOAD, profile, LEASE_MILLIS, 50);
    }

    private static String cursor(PlanFixture fx, UUID run) {
        RunStatus s = new RunStatusReader(fx.control.jdbi()).statusOrNull(run);
        return s == null
                ? "(no run yet)"
                : s.creationProgress().planStatus() + " " + s.creationProgress().planChunkCursor() + "/"
                        + s.expectedChunks();
    }

    private Process start(PlanFixture fx, UUID run, Path out) throws Exception {
        List<String> cmd = RandomKills.java(List.of("-Xmx256m"));
        cmd.addAll(List.of(
                "-cp",
                System.getProperty("java.class.path"),
                CreateMain.class.getName(),
                fx.url,
                fx.storeRoot.toString(),
                UPLOAD.toString(),
                run.toString(),
                profile.toString(),
                Long.toString(LEASE_MILLIS),
                "4",
                "0"));
        return new ProcessBuilder(cmd)
                .redirectErrorStream(true)
                .redirectOutput(out.toFile())
                .start();
    }
}
