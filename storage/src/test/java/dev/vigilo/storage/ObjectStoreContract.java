package dev.vigilo.storage;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vigilo.common.errors.CancelledException;
import dev.vigilo.common.errors.UnavailableException;
import dev.vigilo.common.errors.VigiloException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The behaviour every {@link ObjectStore} promises, as tests. An implementation's test class extends this and
 * supplies {@link #newStore()}; other modules reuse it through this module's test-jar.
 *
 * <p>Each test opens one store, works under its own random key prefix (so stores may share a backing directory
 * or bucket across tests) and closes the store afterwards.
 */
public abstract class ObjectStoreContract {
    /** Threads racing to create one key in the concurrency tests. */
    protected static final int RACERS = 8;
    /** Rounds of each race, each on a fresh key. */
    protected static final int ROUNDS = 20;

    private ObjectStore store;
    private String ns;

    /** Opens the store under test; called before every test, closed after it. */
    protected abstract ObjectStore newStore();

    @BeforeEach
    final void openStore() {
        store = newStore();
        ns = "t" + Long.toHexString(ThreadLocalRandom.current().nextLong() & Long.MAX_VALUE);
    }

    @AfterEach
    final void closeStore() {
        Thread.interrupted(); // a failed interrupt test must not leak its flag into the next test
        if (store != null) {
            store.close();
        }
    }

    /** The store of the current test. */
    protected final ObjectStore store() {
        return store;
    }

    /** A key under the current test's prefix. */
    protected final ObjectKey key(String relative) {
        return ObjectKey.of(ns + "/" + relative);
    }

    /** The current test's key prefix, without trailing {@code /}. */
    protected final String namespace() {
        return ns;
    }

    /** A deadline generous enough for any single call in these tests. */
    protected static Deadline soon() {
        return Deadline.after(Duration.ofSeconds(30));
    }

    @Test
    void readSliceReadsAndVerifiesARange() {
        byte[] whole = "first|second slice|third".getBytes(UTF_8);
        ObjectKey k = key("container");
        store.create(k, whole, soon());
        byte[] middle = "second slice".getBytes(UTF_8);
        ObjectRef slice = ObjectRef.of(k, middle);

        assertThat(store.readSlice(slice, 6, soon())).isEqualTo(middle);
        // the same length at another offset: other bytes, so the digest differs
        assertThatThrownBy(() -> store.readSlice(slice, 5, soon()))
                .isInstanceOf(ObjectIntegrityException.class)
                .hasMessageContaining("offset 5");
        // a slice running past the object's end, and one starting past it
        assertThatThrownBy(() -> store.readSlice(slice, whole.length - 4, soon()))
                .isInstanceOf(ObjectIntegrityException.class)
                .hasMessageContaining("ends 4 bytes into the slice");
        assertThatThrownBy(() -> store.readSlice(slice, whole.length + 10, soon()))
                .isInstanceOf(ObjectIntegrityException.class);
        assertThatThrownBy(() -> store.readSlice(ObjectRef.of(key("absent"), middle), 0, soon()))
                .isInstanceOf(ObjectNotFoundException.class);
    }

    @Test
    void createThenRead() {
        byte[] bytes = "hello, objects".getBytes(UTF_8);
        ObjectRef ref = store.create(key("a/b/hello.txt"), bytes, soon());

        assertThat(ref).isEqualTo(ObjectRef.of(key("a/b/hello.txt"), bytes));
        assertThat(store.read(ref, soon())).isEqualTo(bytes);
    }

    @Test
    void createOfIdenticalBytesIsIdempotent() {
        byte[] bytes = "same".getBytes(UTF_8);
        ObjectRef first = store.create(key("x"), bytes, soon());
        ObjectRef second = store.create(key("x"), bytes.clone(), soon());

        assertThat(second).isEqualTo(first);
        assertThat(store.read(first, soon())).isEqualTo(bytes);
    }

    @Test
    void createOfDifferentBytesConflictsAndKeepsTheOriginal() {
        byte[] original = "original".getBytes(UTF_8);
        ObjectRef ref = store.create(key("x"), original, soon());

        assertThatThrownBy(() -> store.create(key("x"), "ORIGINAL".getBytes(UTF_8), soon()))
                .isInstanceOf(ObjectConflictException.class)
                .hasMessageContaining(key("x").value())
                .satisfies(e -> assertThat(((ObjectConflictException) e).key()).isEqualTo(key("x")));
        assertThatThrownBy(() -> store.create(key("x"), "longer than the original".getBytes(UTF_8), soon()))
                .isInstanceOf(ObjectConflictException.class);
        assertThatThrownBy(() -> store.create(key("x"), new byte[0], soon()))
                .isInstanceOf(ObjectConflictException.class);
        assertThat(store.read(ref, soon())).isEqualTo(original);
    }

    @Test
    void readWithWrongLengthFailsVerification() {
        byte[] bytes = "twelve bytes".getBytes(UTF_8);
        ObjectRef ref = store.create(key("x"), bytes, soon());

        ObjectRef shorter = new ObjectRef(ref.key(), ref.length() - 1, ref.sha256());
        ObjectRef longer = new ObjectRef(ref.key(), ref.length() + 1, ref.sha256());
        assertThatThrownBy(() -> store.read(shorter, soon()))
                .isInstanceOf(ObjectIntegrityException.class)
                .hasMessageContaining("length");
        assertThatThrownBy(() -> store.read(longer, soon()))
                .isInstanceOf(ObjectIntegrityException.class)
                .hasMessageContaining("length");
    }

    @Test
    void readWithWrongDigestFailsVerification() {
        byte[] bytes = "some bytes".getBytes(UTF_8);
        ObjectRef ref = store.create(key("x"), bytes, soon());

        ObjectRef wrong = new ObjectRef(ref.key(), ref.length(), Sha256.of("other bytes".getBytes(UTF_8)));
        assertThatThrownBy(() -> store.read(wrong, soon()))
                .isInstanceOf(ObjectIntegrityException.class)
                .hasMessageContaining("SHA-256")
                .satisfies(e -> assertThat(((ObjectIntegrityException) e).key()).isEqualTo(ref.key()));
    }

    @Test
    void readOfMissingObjectFails() {
        ObjectRef missing = ObjectRef.of(key("missing"), new byte[] {1, 2, 3});

        assertThatThrownBy(() -> store.read(missing, soon()))
                .isInstanceOf(ObjectNotFoundException.class)
                .satisfies(e -> assertThat(((ObjectNotFoundException) e).key()).isEqualTo(missing.key()));
    }

    @Test
    void headDescribesPresentObjectsOnly() {
        byte[] bytes = randomBytes(1234);
        ObjectRef ref = store.create(key("dir/obj"), bytes, soon());

        Optional<ObjectInfo> info = store.head(ref.key(), soon());
        assertThat(info).isPresent();
        assertThat(info.get().key()).isEqualTo(ref.key());
        assertThat(info.get().length()).isEqualTo(1234);
        // A store need not know the digest, but one it reports must be right.
        info.get().sha256().ifPresent(sha -> assertThat(sha).isEqualTo(ref.sha256()));

        assertThat(store.head(key("dir/absent"), soon())).isEmpty();
        assertThat(store.head(key("dir"), soon()))
                .as("a key prefix is not an object")
                .isEmpty();
    }

    @Test
    void listReturnsKeysWithThePrefixInOrder() {
        store.create(key("b/2"), new byte[2], soon());
        store.create(key("a/10"), new byte[10], soon());
        store.create(key("a/1"), new byte[1], soon());
        store.create(key("ab"), new byte[3], soon());
        store.create(ObjectKey.of(ns + "x/a/1"), new byte[1], soon());

        assertThat(keysAndLengths(store.list(ns + "/a", soon())))
                .containsExactly(ns + "/a/1=1", ns + "/a/10=10", ns + "/ab=3");
        assertThat(keysAndLengths(store.list(ns + "/a/", soon()))).containsExactly(ns + "/a/1=1", ns + "/a/10=10");
        assertThat(keysAndLengths(store.list(ns + "/", soon())))
                .containsExactly(ns + "/a/1=1", ns + "/a/10=10", ns + "/ab=3", ns + "/b/2=2");
        assertThat(keysAndLengths(store.list(ns, soon())))
                .containsExactly(ns + "/a/1=1", ns + "/a/10=10", ns + "/ab=3", ns + "/b/2=2", ns + "x/a/1=1");
        assertThat(store.list(ns + "/zzz", soon())).isEmpty();
        assertThat(store.list(ns + "/a/1/", soon())).isEmpty();
    }

    @Test
    void listWithEmptyPrefixListsEverything() {
        store.create(key("only"), new byte[4], soon());

        List<ObjectInfo> all = store.list("", soon());
        assertThat(all).extracting(ObjectInfo::key).contains(key("only")).isSorted();
    }

    @Test
    void emptyObject() {
        ObjectRef ref = store.create(key("empty"), new byte[0], soon());

        assertThat(ref.length()).isZero();
        assertThat(store.read(ref, soon())).isEmpty();
        assertThat(store.head(ref.key(), soon()))
                .get()
                .extracting(ObjectInfo::length)
                .isEqualTo(0L);
        assertThat(store.create(key("empty"), new byte[0], soon())).isEqualTo(ref);
    }

    @Test
    void largeObject() {
        byte[] bytes = randomBytes((1 << 20) + (1 << 19) + 7);
        ObjectRef ref = store.create(key("large"), bytes, soon());

        assertThat(store.read(ref, soon())).isEqualTo(bytes);
        assertThat(store.head(ref.key(), soon()))
                .get()
                .extracting(ObjectInfo::length)
                .isEqualTo((long) bytes.length);
        assertThat(store.create(key("large"), bytes, soon())).isEqualTo(ref);
    }

    @Test
    void expiredDeadlineTimesOutEveryCall() {
        Deadline expired = new Deadline(System.nanoTime() - 1);
        byte[] bytes = "late".getBytes(UTF_8);
        ObjectRef ref = ObjectRef.of(key("late"), bytes);

        assertThatThrownBy(() -> store.create(ref.key(), bytes, expired))
                .isInstanceOf(UnavailableException.class)
                .hasMessageContaining("deadline");
        assertThatThrownBy(() -> store.read(ref, expired))
                .isInstanceOf(UnavailableException.class)
                .hasMessageContaining("deadline");
        assertThatThrownBy(() -> store.head(ref.key(), expired))
                .isInstanceOf(UnavailableException.class)
                .hasMessageContaining("deadline");
        assertThatThrownBy(() -> store.list(ns, expired))
                .isInstanceOf(UnavailableException.class)
                .hasMessageContaining("deadline");
        assertThat(store.head(ref.key(), soon())).isEmpty();
    }

    @Test
    void interruptedThreadCancelsEveryCallAndKeepsTheFlag() {
        byte[] bytes = "interrupted".getBytes(UTF_8);
        ObjectRef existing = store.create(key("there"), bytes, soon());
        ObjectRef ref = ObjectRef.of(key("never"), bytes);

        expectCancelled(s -> s.create(ref.key(), bytes, soon()));
        expectCancelled(s -> s.read(existing, soon()));
        expectCancelled(s -> s.head(existing.key(), soon()));
        expectCancelled(s -> s.list(ns, soon()));
        assertThat(store.head(ref.key(), soon())).isEmpty();
    }

    @Test
    void concurrentCreatesOfDifferentBytesHaveExactlyOneWinner() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(RACERS);
        try {
            for (int round = 0; round < ROUNDS; round++) {
                ObjectKey key = key("race/" + round);
                List<byte[]> contents = new ArrayList<>();
                for (int racer = 0; racer < RACERS; racer++) {
                    contents.add(("round " + round + " racer " + racer).getBytes(UTF_8));
                }
                List<Outcome> outcomes = race(pool, key, contents);

                List<Integer> winners = new ArrayList<>();
                for (int racer = 0; racer < RACERS; racer++) {
                    Outcome outcome = outcomes.get(racer);
                    if (outcome.error() == null) {
                        winners.add(racer);
                    } else {
                        assertThat(outcome.error())
                                .as("round %d racer %d", round, racer)
                                .isInstanceOf(ObjectConflictException.class);
                    }
                }
                assertThat(winners).as("winners of round %d", round).hasSize(1);
                byte[] winnerBytes = contents.get(winners.get(0));
                assertThat(store.read(outcomes.get(winners.get(0)).ref(), soon()))
                        .isEqualTo(winnerBytes);
            }
        } finally {
            shutdown(pool);
        }
    }

    @Test
    void concurrentCreatesOfIdenticalBytesAllSucceed() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(RACERS);
        try {
            for (int round = 0; round < ROUNDS; round++) {
                ObjectKey key = key("same/" + round);
                byte[] bytes = ("round " + round).getBytes(UTF_8);
                List<byte[]> contents = new ArrayList<>();
                for (int racer = 0; racer < RACERS; racer++) {
                    contents.add(bytes.clone());
                }
                List<Outcome> outcomes = race(pool, key, contents);

                for (Outcome outcome : outcomes) {
                    assertThat(outcome.error()).as("round %d", round).isNull();
                    assertThat(outcome.ref()).isEqualTo(ObjectRef.of(key, bytes));
                }
                assertThat(store.read(ObjectRef.of(key, bytes), soon())).isEqualTo(bytes);
            }
        } finally {
            shutdown(pool);
        }
    }

    /** What one racer's create returned or threw. */
    private record Outcome(ObjectRef ref, Throwable error) {}

    /** Starts every racer's create of {@code key} at once and waits for all of them. */
    private List<Outcome> race(ExecutorService pool, ObjectKey key, List<byte[]> contents) throws Exception {
        CountDownLatch ready = new CountDownLatch(contents.size());
        CountDownLatch go = new CountDownLatch(1);
        List<Future<Outcome>> futures = new ArrayList<>();
        for (byte[] bytes : contents) {
            futures.add(pool.submit(() -> {
                ready.countDown();
                go.await();
                try {
                    return new Outcome(store.create(key, bytes, soon()), null);
                } catch (VigiloException e) {
                    return new Outcome(null, e);
                }
            }));
        }
        assertThat(ready.await(10, TimeUnit.SECONDS)).isTrue();
        go.countDown();
        List<Outcome> outcomes = new ArrayList<>();
        for (Future<Outcome> future : futures) {
            outcomes.add(future.get(60, TimeUnit.SECONDS));
        }
        return outcomes;
    }

    private void expectCancelled(Consumer<ObjectStore> call) {
        Thread.currentThread().interrupt();
        try {
            assertThatThrownBy(() -> call.accept(store)).isInstanceOf(CancelledException.class);
            assertThat(Thread.currentThread().isInterrupted())
                    .as("interrupt flag after the call")
                    .isTrue();
        } finally {
            Thread.interrupted();
        }
    }

    private static List<String> keysAndLengths(List<ObjectInfo> infos) {
        return infos.stream().map(info -> info.key() + "=" + info.length()).toList();
    }

    /** Random bytes from a fixed seed, so a failure reproduces. */
    protected static byte[] randomBytes(int length) {
        byte[] bytes = new byte[length];
        new Random(length).nextBytes(bytes);
        return bytes;
    }

    private static void shutdown(ExecutorService pool) throws InterruptedException {
        pool.shutdownNow();
        assertThat(pool.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
    }
}
