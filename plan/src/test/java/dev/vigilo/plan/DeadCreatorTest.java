package dev.vigilo.plan;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.vigilo.common.crash.RandomKills;
import dev.vigilo.common.errors.ConflictException;
import dev.vigilo.common.process.LocalHost;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jdbi.v3.core.Jdbi;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The creation lease records its holder (host name, pid, start time): a real {@code run create} process killed with
 * SIGKILL mid-preparation leaves a lease with minutes to run, which a repeat on the same host takes over at once and
 * completes; a live holder's lease is still refused, and the refusal names the holder and says when the lease can be
 * reclaimed; a holder on another host, and a lease recorded without its holder (an earlier version), are waited out.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class DeadCreatorTest {
    static final int CASES = 3_000;
    static final UUID UPLOAD = UUID.fromString("00000000-0000-4000-8000-0000000000d7");
    /** The default lease: a dead creator's lease would be waited out for about this long without its holder. */
    static final long LEASE_MILLIS = PreparationOptions.DEFAULTS.lease().toMillis();

    static final Duration CHILD_TIMEOUT = Duration.ofSeconds(120);
    static final Pattern RECLAIMABLE =
            Pattern.compile("reclaimable in (\\d+m \\d+s), at (\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ)\\)");

    @TempDir
    Path dir;

    PlanFixture fx;
    Path profile;

    @BeforeEach
    void setUp() throws Exception {
        fx = new PlanFixture(dir.resolve("fx"), CASES, UPLOAD);
        profile = Files.writeString(dir.resolve("profile.yaml"), PlanFixture.PROFILE);
    }

    @AfterEach
    void tearDown() {
        fx.close();
    }

    @Test
    void aRepeatOnTheSameHostTakesOverTheLeaseOfACreatorKilledMidPreparationAtOnce() throws Exception {
        UUID run = UUID.randomUUID();
        // Slowed down (a pause after each write group) so that it is killed with most of its plan still to write.
        Process creator = start(run, 500);
        try {
            assertThat(RandomKills.awaitWhileAlive(
                            creator, CHILD_TIMEOUT, "the creator's first acknowledged chunk", () -> cursor(run) > 0))
                    .as("the creator ran until its first chunks were acknowledged")
                    .isTrue();
        } finally {
            creator.destroyForcibly();
            creator.waitFor();
        }
        assertThat(creator.exitValue()).isEqualTo(RandomKills.KILLED);
        assertThat(cursor(run)).isLessThan(Planner.expectedChunks(CASES));
        // The dead creator's lease has minutes to run.
        assertThat(leaseSecondsLeft(run)).isGreaterThan(60);
        String deadOwner = CreationLeases.owner(jdbi(), run);

        CreateResult repeated = fx.preparation(PlanFixture.fast()).create(request(run));

        assertThat(repeated.planStatus()).isEqualTo(PlanStatus.READY);
        assertThat(repeated.generation().value()).isEqualTo(2);
        RunStatus status = new RunStatusReader(jdbi()).status(run);
        assertThat(status.creationProgress().planChunkCursor()).isEqualTo(status.expectedChunks());
        assertThat(status.creationLease()).isEmpty();
        assertThat(deadOwner).isNotNull();
        assertThat(CreationLeases.owner(jdbi(), run)).isNull();
    }

    @Test
    void aLiveHoldersLeaseIsRefusedNamingItAndSayingWhenItCanBeReclaimed() throws Exception {
        UUID run = UUID.randomUUID();
        // Paused for a minute after its first write group: alive and holding the lease while this test claims.
        Process creator = start(run, 60_000);
        long pid = creator.pid();
        String host = LocalHost.name().orElseThrow();
        try {
            assertThat(RandomKills.awaitWhileAlive(
                            creator,
                            CHILD_TIMEOUT,
                            "the creator's claim",
                            () -> CreationLeases.owner(jdbi(), run) != null))
                    .isTrue();
            Instant now = Instant.now();
            String refused = refusal(run);
            assertThat(refused)
                    .startsWith("run " + run + ": another creator holds the creation lease (pid " + pid
                            + " on this host (" + host + "), still running; reclaimable in ")
                    .endsWith("); wait for it to finish, or stop it and repeat the command (the lease of a creator that"
                            + " no longer runs on this host is taken over at once)");
            Matcher m = RECLAIMABLE.matcher(refused);
            assertThat(m.find()).as(refused).isTrue();
            assertThat(Instant.parse(m.group(2)))
                    .isBetween(now.plusSeconds(200), now.plusSeconds(LEASE_MILLIS / 1000 + 2));
        } finally {
            creator.destroyForcibly();
            creator.waitFor();
        }

        // The same dead pid recorded on another host: this host cannot check it, so the lease is waited out.
        String ours = LocalHost.processNamespace().orElseThrow();
        String otherSpace = "00000000-0000-4000-8000-000000000001/pid:[4026531836]";
        jdbi().useHandle(h -> h.execute(
                "UPDATE runs SET creation_holder_host = 'build-elsewhere', creation_holder_pid_space = ?"
                        + " WHERE run_id = ?",
                otherSpace,
                run));
        assertThat(refusal(run))
                .contains("another creator holds the creation lease (pid " + pid
                        + " on host build-elsewhere; reclaimable in ")
                .endsWith("); wait for it to finish or, if it stopped answering, repeat the command then");

        // This host's name but another pid space (a container sharing the host's network, or before a reboot): its
        // pid means nothing in this process table, so the lease is waited out too.
        jdbi().useHandle(h -> h.execute("UPDATE runs SET creation_holder_host = ? WHERE run_id = ?", host, run));
        assertThat(refusal(run))
                .contains("another creator holds the creation lease (pid " + pid + " in another pid space of host "
                        + host + " (another container, or before a reboot); reclaimable in ");

        // Recorded before control migration V28, without a pid space: not judged either.
        jdbi().useHandle(h -> h.execute("UPDATE runs SET creation_holder_pid_space = NULL WHERE run_id = ?", run));
        assertThat(refusal(run)).contains("in another pid space of host " + host);

        // A lease an earlier version took over (it records no holder, so the one recorded belongs to an older claim).
        jdbi().useHandle(h -> h.execute(
                "UPDATE runs SET creation_holder_host = ?, creation_owner = gen_random_uuid() WHERE run_id = ?",
                host,
                run));
        assertThat(refusal(run))
                .contains("another creator holds the creation lease (reclaimable in ")
                .endsWith("); wait for that creator to finish or, if it crashed, repeat the command then");

        // Recorded for the current claim again, in this pid space and dead: taken over.
        jdbi().useHandle(h -> h.execute(
                "UPDATE runs SET creation_holder_owner = creation_owner, creation_holder_pid_space = ? WHERE run_id = ?",
                ours,
                run));
        assertThat(fx.preparation(PlanFixture.fast()).create(request(run)).planStatus())
                .isEqualTo(PlanStatus.READY);
    }

    @Test
    void anAdmissionLeaseOfALiveHolderIsRefusedNamingIt() {
        UUID run = UUID.randomUUID();
        fx.preparation(PlanFixture.fast()).create(request(run));
        AdmissionLease.Claimed held = (AdmissionLease.Claimed) AdmissionLease.claimForAdmission(jdbi(), run);
        try {
            Throwable refused = catchThrowable(() -> AdmissionLease.claimForAdmission(jdbi(), run));
            assertThat(refused)
                    .isInstanceOf(ConflictException.class)
                    .hasMessageContaining("another process holds the creation lease (pid "
                            + ProcessHandle.current().pid() + " on this host (")
                    .hasMessageContaining("still running; reclaimable in ")
                    .hasMessageEndingWith(
                            "(the lease of a process that no longer runs on this host is taken over at once)");
        } finally {
            held.lease().release();
        }
        // Released: nobody holds it, so the next claim gets it.
        assertThat(AdmissionLease.claimForAdmission(jdbi(), run)).isInstanceOf(AdmissionLease.Claimed.class);
    }

    private String refusal(UUID run) {
        Throwable t = catchThrowable(() -> fx.preparation(PlanFixture.fast()).create(request(run)));
        assertThat(t).isInstanceOf(ConflictException.class);
        return t.getMessage();
    }

    private CreateRequest request(UUID run) {
        return new CreateRequest(ProfileInput.file(profile), UPLOAD, Optional.of(run), false);
    }

    private Jdbi jdbi() {
        return fx.control.jdbi();
    }

    private long cursor(UUID run) {
        RunStatus s = new RunStatusReader(jdbi()).statusOrNull(run);
        return s == null ? 0 : s.creationProgress().planChunkCursor();
    }

    private long leaseSecondsLeft(UUID run) {
        return jdbi().withHandle(h -> h.createQuery("SELECT extract(epoch FROM creation_lease_expires_at"
                        + " - clock_timestamp())::bigint FROM runs WHERE run_id = :r")
                .bind("r", run)
                .mapTo(Long.class)
                .one());
    }

    /** A real {@code run create} ({@link CreateMain}) with the default lease, pausing after each write group. */
    private Process start(UUID run, long pauseMillis) throws Exception {
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
                Long.toString(pauseMillis)));
        return new ProcessBuilder(cmd)
                .redirectErrorStream(true)
                .redirectOutput(dir.resolve("creator-" + run + ".txt").toFile())
                .start();
    }
}
