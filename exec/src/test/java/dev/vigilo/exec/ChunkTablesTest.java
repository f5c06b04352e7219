package dev.vigilo.exec;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigilo.exec.admission.Admission;
import dev.vigilo.exec.placement.ShardRoutes;
import dev.vigilo.exec.record.ChunkTables;
import dev.vigilo.exec.record.Receipt;
import dev.vigilo.storage.Deadline;
import dev.vigilo.storage.ObjectRef;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
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

/** The worker's chunk SQL where outages make it matter: replayed completions, its own held chunks, refunds. */
class ChunkTablesTest {
    private static final Duration LEASE = Duration.ofSeconds(60);

    @TempDir
    Path dir;

    ExecFixture fx;
    Placements placements;
    Jdbi jdbi;
    UUID run;
    List<ChunkTables.Claimable> routes;

    @BeforeEach
    void setUp() throws IOException {
        fx = new ExecFixture(dir, 300);
        placements = Placements.open(fx.control, ExecutionConfig.defaults());
        run = fx.prepare();
        new Admission(placements, fx.storage).admit(run);
        jdbi = placements.jdbi(ExecutionConfig.CONTROL);
        routes = ShardRoutes.claimable(fx.control.jdbi()).get(ExecutionConfig.CONTROL);
    }

    @AfterEach
    void tearDown() {
        placements.close();
        fx.close();
    }

    private ChunkTables.Lease claim(UUID owner, List<ChunkTables.Held> held) {
        return jdbi.inTransaction(h -> ChunkTables.claim(h, routes, owner, LEASE, held))
                .orElseThrow();
    }

    private ObjectRef receipt(ChunkTables.Lease l, String body) {
        return fx.store.create(
                Receipt.key(run, l.chunkIndex(), l.generation()),
                body.getBytes(StandardCharsets.UTF_8),
                Deadline.after(Duration.ofSeconds(10)));
    }

    private ChunkTables.Completion complete(ChunkTables.Lease l, ObjectRef ref) {
        return jdbi.inTransaction(h -> ChunkTables.complete(h, l, ref, none()));
    }

    private boolean requeue(ChunkTables.Lease l, boolean refund) {
        return jdbi.inTransaction(h -> ChunkTables.requeue(h, l, Duration.ZERO, "test", refund));
    }

    private boolean renew(ChunkTables.Lease l) {
        return jdbi.inTransaction(h -> ChunkTables.renew(h, l, LEASE));
    }

    private static ChunkTables.Tallies none() {
        return new ChunkTables.Tallies(0, 0, new long[2], new long[2], new long[2], new long[0]);
    }

    private void expire(long chunk) {
        jdbi.useHandle(h -> h.createUpdate("UPDATE exec_chunks SET lease_expires_at = now() - interval '1 second'"
                        + " WHERE run_id = :r AND chunk_index = :c")
                .bind("r", run)
                .bind("c", chunk)
                .execute());
    }

    private int attempts(long chunk) {
        return jdbi.withHandle(
                h -> h.createQuery("SELECT attempts FROM exec_chunks WHERE run_id = :r AND chunk_index = :c")
                        .bind("r", run)
                        .bind("c", chunk)
                        .mapTo(Integer.class)
                        .one());
    }

    @Test
    void aReplayedCompletionWhoseCommitWasLostCountsOnceAndAnotherReceiptIsFenced() {
        ChunkTables.Lease l = claim(UUID.randomUUID(), List.of());
        ObjectRef ref = receipt(l, "{\"receipt\":1}");
        assertThat(complete(l, ref)).isEqualTo(ChunkTables.Completion.COMPLETED);
        // The database went away while acknowledging the commit; the worker replays the same completion.
        assertThat(complete(l, ref)).isEqualTo(ChunkTables.Completion.COMPLETED);
        // Another reference under the same lease is not this completion: it does not count.
        ObjectRef other = new ObjectRef(ref.key(), ref.length(), dev.vigilo.storage.Sha256.of("x".getBytes()));
        assertThat(complete(l, other)).isEqualTo(ChunkTables.Completion.FENCED);
        String sha = jdbi.withHandle(
                h -> h.createQuery("SELECT receipt_sha256 FROM exec_chunks WHERE run_id = :r AND chunk_index = :c")
                        .bind("r", run)
                        .bind("c", l.chunkIndex())
                        .mapTo(String.class)
                        .one());
        assertThat(sha).isEqualTo(ref.sha256().toHex());
    }

    @Test
    void aWorkersClaimSkipsTheChunksItHoldsEvenWhenTheirLeasesExpired() {
        UUID owner = UUID.randomUUID();
        ChunkTables.Lease first = claim(owner, List.of());
        expire(first.chunkIndex()); // the database was out for longer than the lease
        ChunkTables.Lease next = claim(owner, List.of(new ChunkTables.Held(run, first.chunkIndex())));
        assertThat(next.chunkIndex()).isNotEqualTo(first.chunkIndex());
        // Its lease is still the worker's to renew and complete.
        assertThat(renew(first)).isTrue();
        // A worker that does not hold it takes an expired lease over, as before.
        expire(first.chunkIndex());
        ChunkTables.Lease takenOver = claim(UUID.randomUUID(), List.of());
        assertThat(takenOver.chunkIndex()).isEqualTo(first.chunkIndex());
        assertThat(takenOver.generation()).isEqualTo(first.generation() + 1);
    }

    @Test
    void onlyTakingOverAnExpiredLeaseCountsAsARequeueAfterExpiry() {
        ChunkTables.Lease given = claim(UUID.randomUUID(), List.of());
        assertThat(requeue(given, false)).isTrue(); // given back by its worker: not an expiry
        ChunkTables.Lease again = claim(UUID.randomUUID(), List.of());
        assertThat(again.chunkIndex()).isEqualTo(given.chunkIndex());
        assertThat(expiredChunks()).isZero();
        expire(again.chunkIndex()); // its worker stopped renewing (died, or cut off from the database)
        ChunkTables.Lease takenOver = claim(UUID.randomUUID(), List.of());
        assertThat(takenOver.chunkIndex()).isEqualTo(again.chunkIndex());
        assertThat(expiredChunks()).isEqualTo(1);
        expire(takenOver.chunkIndex()); // a second expiry of the same chunk: still one chunk
        claim(UUID.randomUUID(), List.of());
        assertThat(expiredChunks()).isEqualTo(1);
        int expiries = jdbi.withHandle(
                h -> h.createQuery("SELECT lease_expiries FROM exec_chunks WHERE run_id = :r AND chunk_index = :c")
                        .bind("r", run)
                        .bind("c", again.chunkIndex())
                        .mapTo(Integer.class)
                        .one());
        assertThat(expiries).isEqualTo(2);
    }

    /** The status's count of chunks requeued after a lease expiry, summed over the run's shards. */
    private long expiredChunks() {
        return jdbi.withHandle(h -> {
            List<Integer> shards = h.createQuery("SELECT DISTINCT shard FROM exec_chunks WHERE run_id = :r")
                    .bind("r", run)
                    .mapTo(Integer.class)
                    .list();
            return dev.vigilo.exec.record.ShardTallies.read(h, run, shards, 2, 1).values().stream()
                    .mapToLong(dev.vigilo.exec.record.ShardTallies.Tally::chunksExpired)
                    .sum();
        });
    }

    @Test
    void aRequeueForAnOutageRefundsTheAttemptAndOtherRequeuesKeepIt() {
        ChunkTables.Lease l = claim(UUID.randomUUID(), List.of());
        assertThat(attempts(l.chunkIndex())).isEqualTo(1);
        assertThat(requeue(l, true)).isTrue();
        assertThat(attempts(l.chunkIndex())).isZero();
        ChunkTables.Lease again = claim(UUID.randomUUID(), List.of());
        assertThat(again.chunkIndex()).isEqualTo(l.chunkIndex());
        assertThat(requeue(again, false)).isTrue();
        assertThat(attempts(l.chunkIndex())).isEqualTo(1);
    }

    private boolean reference(ChunkTables.Lease l, ObjectRef ref, int cases) {
        return jdbi.inTransaction(h -> ChunkTables.referencePartial(h, l, new ChunkTables.Partial(ref, cases)));
    }

    private ObjectRef partial(ChunkTables.Lease l, int sequence) {
        return fx.store.create(
                dev.vigilo.exec.record.PartialReceipt.key(run, l.chunkIndex(), l.generation(), sequence),
                ("{\"partial\":" + sequence + "}").getBytes(StandardCharsets.UTF_8),
                Deadline.after(Duration.ofSeconds(10)));
    }

    private Optional<ChunkTables.Partial> partialOf(long chunk) {
        return jdbi.withHandle(h -> h.createQuery("SELECT partial_key, partial_length, partial_sha256, partial_cases"
                        + " FROM exec_chunks WHERE run_id = :r AND chunk_index = :c")
                .bind("r", run)
                .bind("c", chunk)
                .map((rs, ctx) -> rs.getString("partial_key") == null
                        ? Optional.<ChunkTables.Partial>empty()
                        : Optional.of(new ChunkTables.Partial(
                                new ObjectRef(
                                        dev.vigilo.storage.ObjectKey.of(rs.getString("partial_key")),
                                        rs.getLong("partial_length"),
                                        dev.vigilo.storage.Sha256.parseHex(rs.getString("partial_sha256"))),
                                rs.getInt("partial_cases"))))
                .one());
    }

    @Test
    void aPartialReferenceIsFencedByOwnerAndGenerationCarriedToTheNextClaimAndClearedAtCompletion() {
        ChunkTables.Lease first = claim(UUID.randomUUID(), List.of());
        ObjectRef p1 = partial(first, 1);
        assertThat(reference(first, p1, 16)).isTrue();
        assertThat(partialOf(first.chunkIndex())).contains(new ChunkTables.Partial(p1, 16));

        // The holder died; its lease is taken over: the claim hands the reference to the new holder.
        expire(first.chunkIndex());
        ChunkTables.Lease second = claim(UUID.randomUUID(), List.of());
        assertThat(second.chunkIndex()).isEqualTo(first.chunkIndex());
        assertThat(second.generation()).isEqualTo(first.generation() + 1);
        assertThat(second.partial()).contains(new ChunkTables.Partial(p1, 16));

        // The stale holder's update (an older generation) is refused and changes nothing.
        ObjectRef stale = new ObjectRef(p1.key(), p1.length() + 1, p1.sha256());
        assertThat(reference(first, stale, 32)).isFalse();
        assertThat(partialOf(first.chunkIndex())).contains(new ChunkTables.Partial(p1, 16));
        // The same owner with a stale generation is refused too.
        ChunkTables.Lease sameOwnerOldGeneration = new ChunkTables.Lease(
                second.runId(),
                second.chunkIndex(),
                second.owner(),
                first.generation(),
                second.attempts(),
                second.seed());
        assertThat(reference(sameOwnerOldGeneration, stale, 32)).isFalse();

        ObjectRef p2 = partial(second, 2);
        assertThat(reference(second, p2, 32)).isTrue();
        assertThat(partialOf(first.chunkIndex())).contains(new ChunkTables.Partial(p2, 32));
        assertThat(complete(second, receipt(second, "{\"receipt\":2}"))).isEqualTo(ChunkTables.Completion.COMPLETED);
        assertThat(partialOf(first.chunkIndex())).isEmpty();
        // After completion, no holder references anything any more.
        assertThat(reference(second, p2, 32)).isFalse();
    }
}
