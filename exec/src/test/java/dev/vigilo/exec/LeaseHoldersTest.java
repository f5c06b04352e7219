package dev.vigilo.exec;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigilo.common.process.LocalHost;
import dev.vigilo.common.process.ProcessRef;
import dev.vigilo.exec.admission.Admission;
import dev.vigilo.exec.placement.ShardRoutes;
import dev.vigilo.exec.record.ChunkTables;
import dev.vigilo.exec.record.LeaseHolders;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import org.jdbi.v3.core.Jdbi;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The judgement of a lease holder that died on this machine: a refresh ends at once the leases of a holder of the same
 * pid space whose process was killed, or whose pid now belongs to another process (another start time), and nothing
 * of a live holder or of a holder of another pid space (another machine or container), whose leases still expire.
 */
class LeaseHoldersTest {
    /** Long enough that no lease of these tests expires by itself while they run. */
    private static final Duration LEASE = Duration.ofMinutes(10);

    @TempDir
    Path dir;

    ExecFixture fx;
    Placements placements;
    Jdbi jdbi;
    UUID run;
    List<ChunkTables.Claimable> routes;
    String here;

    @BeforeEach
    void setUp() throws IOException {
        fx = new ExecFixture(dir, 300);
        placements = Placements.open(fx.control, ExecutionConfig.defaults());
        run = fx.prepare();
        new Admission(placements, fx.storage).admit(run);
        jdbi = placements.jdbi(ExecutionConfig.CONTROL);
        routes = ShardRoutes.claimable(fx.control.jdbi()).get(ExecutionConfig.CONTROL);
        here = LocalHost.processNamespace().orElseThrow(() -> new AssertionError("no pid space identity here"));
    }

    @AfterEach
    void tearDown() {
        placements.close();
        fx.close();
    }

    /** Records {@code holder} and claims one chunk as it. */
    private ChunkTables.Lease holding(LeaseHolders.Holder holder) {
        jdbi.inTransaction(h -> LeaseHolders.refresh(h, holder));
        return jdbi.inTransaction(h -> ChunkTables.claim(h, routes, holder.owner(), LEASE))
                .orElseThrow();
    }

    private static LeaseHolders.Holder holder(String space, ProcessRef process) {
        return new LeaseHolders.Holder(UUID.randomUUID(), Optional.of("h"), Optional.of(space), process);
    }

    /** A process of this machine that was killed with SIGKILL (and reaped). */
    private static ProcessRef killed() throws Exception {
        Process p = new ProcessBuilder("sleep", "600").start();
        ProcessRef ref = ProcessRef.of(p.toHandle());
        p.destroyForcibly();
        p.waitFor();
        return ref;
    }

    private boolean renew(ChunkTables.Lease lease) {
        return jdbi.inTransaction(h -> ChunkTables.renew(h, lease, LEASE));
    }

    private List<LeaseHolders.Ended> refresh(LeaseHolders.Holder holder) {
        return jdbi.inTransaction(h -> LeaseHolders.refresh(h, holder));
    }

    private List<LeaseHolders.Ended> refreshAsAnotherWorker() {
        return jdbi.inTransaction(h -> LeaseHolders.refresh(h, LeaseHolders.Holder.current(UUID.randomUUID())));
    }

    private Optional<ChunkTables.Lease> claim() {
        return jdbi.inTransaction(h -> ChunkTables.claim(h, routes, UUID.randomUUID(), LEASE));
    }

    private long holders(UUID owner) {
        return jdbi.withHandle(h -> h.createQuery("SELECT count(*) FROM exec_lease_holders WHERE owner = :o")
                .bind("o", owner)
                .mapTo(Long.class)
                .one());
    }

    @Test
    void aKilledHolderOfThisMachineLosesItsLeasesAtOnceAndTheNextClaimTakesThemFenced() throws Exception {
        LeaseHolders.Holder dead = holder(here, killed());
        ChunkTables.Lease lease = holding(dead);

        List<LeaseHolders.Ended> ended = refreshAsAnotherWorker();

        assertThat(ended).hasSize(1);
        assertThat(ended.get(0).holder().owner()).isEqualTo(dead.owner());
        assertThat(ended.get(0).leases()).isEqualTo(1);
        assertThat(holders(dead.owner())).as("the dead holder's row").isZero();
        ChunkTables.Lease taken = claim().orElseThrow();
        assertThat(taken.chunkIndex()).isEqualTo(lease.chunkIndex());
        assertThat(taken.generation()).isEqualTo(lease.generation() + 1);
        // The dead holder's lease is fenced: it could renew nothing even if it ran.
        assertThat(renew(lease)).isFalse();
    }

    @Test
    void aRecycledPidIsNotTheHolder() {
        ProcessRef me = ProcessRef.current();
        // This JVM's pid with another start time: the holder's pid was given to another process since.
        LeaseHolders.Holder dead = holder(here, new ProcessRef(me.pid(), me.startEpochMilli() - 3_600_000));
        ChunkTables.Lease lease = holding(dead);

        assertThat(refreshAsAnotherWorker()).extracting(e -> e.holder().owner()).containsExactly(dead.owner());
        assertThat(claim().orElseThrow().chunkIndex()).isEqualTo(lease.chunkIndex());
    }

    @Test
    void aLiveHolderKeepsItsLeases() {
        // Another worker of this very process (tests run several per JVM): same pid and start time, alive.
        LeaseHolders.Holder live = LeaseHolders.Holder.current(UUID.randomUUID());
        ChunkTables.Lease lease = holding(live);

        assertThat(refreshAsAnotherWorker()).isEmpty();
        assertThat(holders(live.owner())).isOne();
        assertThat(claim().orElseThrow().chunkIndex()).isNotEqualTo(lease.chunkIndex());
        assertThat(renew(lease)).isTrue();
    }

    @Test
    void aDeadHolderOfAnotherPidSpaceIsNotJudgedAndItsLeasesStillExpire() throws Exception {
        // The same pid and start time, dead here, but recorded by another machine (or container): this process
        // table says nothing about it.
        LeaseHolders.Holder elsewhere = holder("another-boot/pid:[4026531836]", killed());
        ChunkTables.Lease lease = holding(elsewhere);

        assertThat(refreshAsAnotherWorker()).isEmpty();
        assertThat(holders(elsewhere.owner())).isOne();
        assertThat(claim().orElseThrow().chunkIndex()).isNotEqualTo(lease.chunkIndex());
        // Its lease expires as before, and is then taken over.
        jdbi.useHandle(h -> h.createUpdate("UPDATE exec_chunks SET lease_expires_at = now() - interval '1 second'"
                        + " WHERE run_id = :r AND chunk_index = :c")
                .bind("r", run)
                .bind("c", lease.chunkIndex())
                .execute());
        assertThat(claim().orElseThrow().chunkIndex()).isEqualTo(lease.chunkIndex());
    }

    @Test
    void aHolderWithoutAPidSpaceJudgesNobody() throws Exception {
        LeaseHolders.Holder dead = holder(here, killed());
        holding(dead);
        LeaseHolders.Holder blind =
                new LeaseHolders.Holder(UUID.randomUUID(), Optional.empty(), Optional.empty(), ProcessRef.current());

        assertThat(refresh(blind)).isEmpty();
        assertThat(holders(dead.owner())).isOne();
    }
}
