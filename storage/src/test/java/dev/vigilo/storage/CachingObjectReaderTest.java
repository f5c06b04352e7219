package dev.vigilo.storage;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vigilo.common.errors.CancelledException;
import dev.vigilo.common.errors.UnavailableException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The immutable-byte cache over a real local store (and a real S3 service for unavailability). */
class CachingObjectReaderTest {
    @TempDir
    Path dir;

    private Path root;
    private ObjectStore store;
    private CountingReader counting;
    private CachingObjectReader cache;

    @BeforeEach
    void open() {
        root = dir.resolve("objects");
        store = ObjectStores.open(new StoreSpec.Local("local", root));
        counting = new CountingReader(store);
        cache = new CachingObjectReader(counting);
    }

    @AfterEach
    void close() {
        Thread.interrupted(); // an interrupt test must not leak its flag
        store.close();
    }

    private static Deadline soon() {
        return Deadline.after(Duration.ofSeconds(30));
    }

    private ObjectRef put(String key, byte[] bytes) {
        return store.create(ObjectKey.of(key), bytes, soon());
    }

    private ObjectRef put(String key, int length) {
        byte[] bytes = new byte[length];
        ThreadLocalRandom.current().nextBytes(bytes);
        return put(key, bytes);
    }

    private Path fileOf(ObjectRef ref) {
        return root.resolve(ref.key().value());
    }

    @Test
    void aHitIsServedWithoutAStoreReadAsAnOwnedCopy() {
        byte[] bytes = "cached bytes".getBytes(UTF_8);
        ObjectRef ref = put("a/one", bytes);

        byte[] first = cache.read(ref, soon());
        first[0] = 'X'; // the caller owns its array
        byte[] second = cache.read(ref, soon());
        byte[] third = cache.read(ref, soon());

        assertThat(second).isEqualTo(bytes).isNotSameAs(third);
        assertThat(third).isEqualTo(bytes);
        assertThat(second).isNotSameAs(cache.retainedArray(ref));
        assertThat(counting.reads(ref)).isEqualTo(1);
        assertThat(cache.stats())
                .isEqualTo(new CachingObjectReader.Stats(
                        2, 1, 0, 0, 1, CachingObjectReader.charge(key(ref), bytes.length)));
    }

    private CachingObjectReader.Key key(ObjectRef ref) {
        return new CachingObjectReader.Key(store.binding(), ref);
    }

    @Test
    void the257thFileEvictsTheLeastRecentlyUsed() {
        List<ObjectRef> refs = new ArrayList<>();
        for (int i = 0; i <= CachingObjectReader.MAX_FILES; i++) {
            refs.add(put("many/f" + i, ("object " + i).getBytes(UTF_8)));
        }
        for (int i = 0; i < CachingObjectReader.MAX_FILES; i++) {
            cache.read(refs.get(i), soon());
        }
        assertThat(cache.stats().files()).isEqualTo(256);
        assertThat(cache.stats().evictions()).isZero();

        cache.read(refs.get(0), soon()); // a hit: file 0 becomes the most recently used, file 1 the eldest
        cache.read(refs.get(256), soon()); // the 257th file

        assertThat(cache.stats().files()).isEqualTo(256);
        assertThat(cache.stats().evictions()).isEqualTo(1);
        assertThat(cache.retainedArray(refs.get(1))).isNull();
        assertThat(cache.read(refs.get(0), soon())).isEqualTo("object 0".getBytes(UTF_8));
        assertThat(counting.reads(refs.get(0))).isEqualTo(1);
        assertThat(cache.read(refs.get(1), soon())).isEqualTo("object 1".getBytes(UTF_8));
        assertThat(counting.reads(refs.get(1))).isEqualTo(2);
    }

    @Test
    void chargedBytesStayWithinEightMiB() {
        int size = CachingObjectReader.MAX_RETAINED_LENGTH; // exactly 1 MiB is still retained
        List<ObjectRef> refs = new ArrayList<>();
        for (int i = 0; i < 9; i++) {
            refs.add(put("big/f" + i, size));
        }
        long each = CachingObjectReader.charge(key(refs.get(0)), size);
        for (ObjectRef ref : refs) {
            cache.read(ref, soon());
            assertThat(cache.stats().chargedBytes()).isLessThanOrEqualTo(CachingObjectReader.MAX_CHARGED_BYTES);
        }
        // Eight 1 MiB files plus their reference charge exceed 8 MiB, so only seven stay.
        assertThat(cache.stats().files()).isEqualTo(7);
        assertThat(cache.stats().chargedBytes()).isEqualTo(7 * each);
        assertThat(cache.stats().evictions()).isEqualTo(2);
        cache.read(refs.get(8), soon());
        assertThat(counting.reads(refs.get(8))).isEqualTo(1);
        cache.read(refs.get(0), soon());
        assertThat(counting.reads(refs.get(0))).isEqualTo(2);
    }

    @Test
    void objectsOverOneMiBBypassRetention() {
        ObjectRef large = put("large", CachingObjectReader.MAX_RETAINED_LENGTH + 1);
        byte[] first = cache.read(large, soon());
        byte[] second = cache.read(large, soon());

        assertThat(second).isEqualTo(first).hasSize(CachingObjectReader.MAX_RETAINED_LENGTH + 1);
        assertThat(counting.reads(large)).isEqualTo(2);
        assertThat(cache.stats()).isEqualTo(new CachingObjectReader.Stats(0, 0, 2, 0, 0, 0));
    }

    @Test
    void aRetainedCopyThatNoLongerVerifiesIsDroppedAndReadAgain() {
        byte[] bytes = "will be damaged in memory".getBytes(UTF_8);
        ObjectRef ref = put("damaged", bytes);
        cache.read(ref, soon());
        cache.retainedArray(ref)[3] ^= 0x20;

        assertThat(cache.read(ref, soon())).isEqualTo(bytes);
        assertThat(counting.reads(ref)).isEqualTo(2);
        assertThat(cache.stats().hits()).isZero();
        assertThat(cache.stats().misses()).isEqualTo(2);

        assertThat(cache.read(ref, soon())).isEqualTo(bytes);
        assertThat(counting.reads(ref)).isEqualTo(2);
        assertThat(cache.stats().hits()).isEqualTo(1);
        assertThat(cache.stats().files()).isEqualTo(1);
    }

    @Test
    void missingAndDamagedObjectsAreNeverRetained() throws IOException {
        byte[] bytes = "appears later".getBytes(UTF_8);
        ObjectRef later = ObjectRef.of(ObjectKey.of("later"), bytes);
        assertThatThrownBy(() -> cache.read(later, soon())).isInstanceOf(ObjectNotFoundException.class);
        assertThat(cache.stats().files()).isZero();
        put("later", bytes);
        assertThat(cache.read(later, soon())).isEqualTo(bytes);
        assertThat(counting.reads(later)).isEqualTo(2);

        ObjectRef victim = put("victim", "on disk, then damaged".getBytes(UTF_8));
        byte[] good = Files.readAllBytes(fileOf(victim));
        byte[] bad = good.clone();
        bad[0] ^= 0x01;
        Files.write(fileOf(victim), bad);
        assertThatThrownBy(() -> cache.read(victim, soon())).isInstanceOf(ObjectIntegrityException.class);
        assertThat(cache.retainedArray(victim)).isNull();
        assertThat(cache.stats().files()).isEqualTo(1);

        Files.write(fileOf(victim), good);
        assertThat(cache.read(victim, soon())).isEqualTo(good);
        assertThat(cache.read(victim, soon())).isEqualTo(good);
        assertThat(counting.reads(victim)).isEqualTo(2);
    }

    @Test
    void bytesFromAReaderThatBreaksItsContractAreRejectedAndNotRetained() {
        byte[] bytes = "honest bytes".getBytes(UTF_8);
        ObjectRef ref = put("lied-about", bytes);
        ObjectReader lying = new ObjectReader() {
            @Override
            public StoreBinding binding() {
                return store.binding();
            }

            @Override
            public byte[] read(ObjectRef r, Deadline deadline) {
                byte[] read = store.read(r, deadline);
                read[0] ^= 0x01;
                return read;
            }
        };
        CachingObjectReader overLiar = new CachingObjectReader(lying);
        assertThatThrownBy(() -> overLiar.read(ref, soon()))
                .isInstanceOf(ObjectIntegrityException.class)
                .hasMessageContaining("lied-about");
        assertThat(overLiar.stats().files()).isZero();
    }

    @Test
    void aRetainedCopyIsServedWhenTheObjectIsGoneLocally() throws IOException {
        byte[] bytes = "kept".getBytes(UTF_8);
        ObjectRef ref = put("gone", bytes);
        cache.read(ref, soon());
        Files.delete(fileOf(ref));
        assertThat(cache.read(ref, soon())).isEqualTo(bytes);
        assertThatThrownBy(() -> store.read(ref, soon())).isInstanceOf(ObjectNotFoundException.class);
    }

    @Test
    void aRetainedCopyIsServedWhileTheRemoteStoreIsDown() {
        S3ProxyFixture s3 = S3ProxyFixture.start();
        boolean stopped = false;
        try (ObjectStore remote = ObjectStores.open(s3.spec("cache"))) {
            byte[] bytes = "remote bytes".getBytes(UTF_8);
            ObjectRef cached = remote.create(ObjectKey.of("r/cached"), bytes, soon());
            ObjectRef notCached = remote.create(ObjectKey.of("r/not-cached"), "other".getBytes(UTF_8), soon());
            CachingObjectReader remoteCache = cache.forStore(remote);
            remoteCache.read(cached, soon());

            s3.close();
            stopped = true;

            assertThat(remoteCache.read(cached, soon())).isEqualTo(bytes);
            assertThatThrownBy(() -> remoteCache.read(notCached, soon())).isInstanceOf(UnavailableException.class);
            assertThat(remoteCache.stats().files()).isEqualTo(1);
        } finally {
            if (!stopped) {
                s3.close();
            }
        }
    }

    @Test
    void readersSharingACacheKeepStoresApart() {
        byte[] bytes = "same key, same bytes, two stores".getBytes(UTF_8);
        ObjectRef ref = put("shared/x", bytes);
        try (ObjectStore other = ObjectStores.open(new StoreSpec.Local("other", dir.resolve("other")))) {
            other.create(ref.key(), bytes, soon());
            CountingReader otherCounting = new CountingReader(other);
            CachingObjectReader otherCache = cache.forStore(otherCounting);
            assertThat(otherCache.binding()).isEqualTo(other.binding());

            cache.read(ref, soon());
            otherCache.read(ref, soon());
            otherCache.read(ref, soon());

            assertThat(counting.reads(ref)).isEqualTo(1);
            assertThat(otherCounting.reads(ref)).isEqualTo(1);
            assertThat(cache.stats().files()).isEqualTo(2);
            assertThat(otherCache.stats()).isEqualTo(cache.stats());
        }
    }

    @Test
    void anExpiredDeadlineOrAnInterruptFailsAHit() {
        ObjectRef ref = put("deadline", "x".getBytes(UTF_8));
        cache.read(ref, soon());
        Deadline expired = new Deadline(System.nanoTime() - 1);

        assertThatThrownBy(() -> cache.read(ref, expired))
                .isInstanceOf(UnavailableException.class)
                .hasMessageContaining("deadline");
        Thread.currentThread().interrupt();
        assertThatThrownBy(() -> cache.read(ref, soon())).isInstanceOf(CancelledException.class);
        assertThat(Thread.interrupted()).isTrue();
        assertThat(cache.stats().hits()).isZero();
        assertThat(counting.reads(ref)).isEqualTo(1);
    }

    @Test
    void aSlowReadHoldsNoLockOverAHitOrAnotherMissOfTheSameObject() throws Exception {
        ObjectRef hot = put("hot", "hot".getBytes(UTF_8));
        ObjectRef slow = put("slow", "slow".getBytes(UTF_8));
        CountDownLatch bothInside = new CountDownLatch(2);
        CountDownLatch release = new CountDownLatch(1);
        counting.gate(slow.key(), bothInside, release);
        cache.read(hot, soon());

        ExecutorService pool = Executors.newFixedThreadPool(3);
        try {
            Future<byte[]> slowA = pool.submit(() -> cache.read(slow, soon()));
            Future<byte[]> slowB = pool.submit(() -> cache.read(slow, soon()));
            // Both misses are inside the store at once: no lock (not even per key) spans the read.
            assertThat(bothInside.await(30, TimeUnit.SECONDS)).isTrue();

            Future<byte[]> hit = pool.submit(() -> cache.read(hot, soon()));
            assertThat(hit.get(30, TimeUnit.SECONDS)).isEqualTo("hot".getBytes(UTF_8));
            assertThat(slowA.isDone()).isFalse();
            assertThat(slowB.isDone()).isFalse();

            release.countDown();
            assertThat(slowA.get(30, TimeUnit.SECONDS)).isEqualTo("slow".getBytes(UTF_8));
            assertThat(slowB.get(30, TimeUnit.SECONDS)).isEqualTo("slow".getBytes(UTF_8));
        } finally {
            release.countDown();
            pool.shutdownNow();
        }
        assertThat(counting.reads(slow)).isEqualTo(2);
        assertThat(cache.stats().files()).isEqualTo(2);
    }

    @Test
    void manyThreadsReadConsistentBytesWithinTheBounds() throws Exception {
        int objects = CachingObjectReader.MAX_FILES + 44;
        List<ObjectRef> refs = new ArrayList<>();
        List<byte[]> contents = new ArrayList<>();
        for (int i = 0; i < objects; i++) {
            byte[] bytes = ("object number " + i + " ").repeat(1 + i % 7).getBytes(UTF_8);
            contents.add(bytes);
            refs.add(put("conc/" + i, bytes));
        }
        int threads = 8;
        int readsEach = 600;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<Integer>> done = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                done.add(pool.submit(() -> {
                    int bad = 0;
                    for (int r = 0; r < readsEach; r++) {
                        // Skewed towards the low numbers so that there are hits and evictions.
                        int i = (int) Math.min(
                                objects - 1,
                                Math.abs(ThreadLocalRandom.current().nextGaussian()) * 120);
                        if (!Arrays.equals(cache.read(refs.get(i), soon()), contents.get(i))) {
                            bad++;
                        }
                    }
                    return bad;
                }));
            }
            for (Future<Integer> f : done) {
                assertThat(f.get(120, TimeUnit.SECONDS)).isZero();
            }
        } finally {
            pool.shutdownNow();
        }
        CachingObjectReader.Stats stats = cache.stats();
        assertThat(stats.hits() + stats.misses()).isEqualTo((long) threads * readsEach);
        assertThat(stats.misses()).isEqualTo(counting.total());
        assertThat(stats.hits()).isPositive();
        assertThat(stats.files()).isLessThanOrEqualTo(CachingObjectReader.MAX_FILES);
        long charged = 0;
        for (ObjectRef ref : refs) {
            byte[] kept = cache.retainedArray(ref);
            if (kept != null) {
                assertThat(kept).isEqualTo(contents.get(refs.indexOf(ref)));
                charged += CachingObjectReader.charge(key(ref), kept.length);
            }
        }
        assertThat(stats.chargedBytes()).isEqualTo(charged);
    }

    /** Passes reads to a real store, counting them per key; can hold reads of one key at a gate. */
    private static final class CountingReader implements ObjectReader {
        private final ObjectReader store;
        private final Map<ObjectKey, AtomicInteger> reads = new ConcurrentHashMap<>();
        private volatile ObjectKey gated;
        private volatile CountDownLatch inside;
        private volatile CountDownLatch release;

        CountingReader(ObjectReader store) {
            this.store = store;
        }

        void gate(ObjectKey key, CountDownLatch inside, CountDownLatch release) {
            this.inside = inside;
            this.release = release;
            this.gated = key;
        }

        int reads(ObjectRef ref) {
            AtomicInteger n = reads.get(ref.key());
            return n == null ? 0 : n.get();
        }

        long total() {
            return reads.values().stream().mapToLong(AtomicInteger::get).sum();
        }

        @Override
        public StoreBinding binding() {
            return store.binding();
        }

        @Override
        public byte[] read(ObjectRef ref, Deadline deadline) {
            reads.computeIfAbsent(ref.key(), k -> new AtomicInteger()).incrementAndGet();
            if (ref.key().equals(gated)) {
                inside.countDown();
                try {
                    if (!release.await(30, TimeUnit.SECONDS)) {
                        throw new UnavailableException("test gate was never released");
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new CancelledException("interrupted at the test gate", e);
                }
            }
            return store.read(ref, deadline);
        }
    }
}
