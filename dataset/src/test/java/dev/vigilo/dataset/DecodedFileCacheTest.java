package dev.vigilo.dataset;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vigilo.storage.ObjectKey;
import dev.vigilo.storage.ObjectRef;
import dev.vigilo.storage.Sha256;
import dev.vigilo.storage.StoreBinding;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Concurrent misses of one file in {@link DecodedFileCache}: a worker's chunks reach a new case file together, and
 * only one of them decodes it.
 */
class DecodedFileCacheTest {
    private final ExecutorService threads = Executors.newFixedThreadPool(2);
    private final byte[] line = "{\"id\":\"a\"}".getBytes(StandardCharsets.UTF_8);
    private final StoredCase stored =
            new StoredCase(0, new CaseFields("a", Optional.empty(), List.of()), Sha256.of(line), line);
    private final DecodedFileCache.CaseKey key = new DecodedFileCache.CaseKey(
            new StoreBinding("local:/cache-test"), ObjectRef.of(ObjectKey.of("datasets/cases/x.jsonl"), line), 0, 1);

    @AfterEach
    void stop() {
        threads.shutdownNow();
    }

    /** Waits until {@code t} is parked (waiting for the first decoding), the event the test needs. */
    private static void awaitWaiting(Thread t) throws InterruptedException {
        while (t.getState() != Thread.State.WAITING && t.getState() != Thread.State.TIMED_WAITING) {
            Thread.onSpinWait();
            Thread.sleep(1);
        }
    }

    @Test
    void concurrentMissesOfOneFileDecodeItOnce() throws Exception {
        DecodedFileCache cache = new DecodedFileCache(DecodedFileCache.DEFAULT_MAX_CHARGED_BYTES);
        AtomicInteger decodes = new AtomicInteger();
        CountDownLatch decoding = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        Supplier<List<StoredCase>> decode = () -> {
            decodes.incrementAndGet();
            decoding.countDown();
            try {
                release.await();
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
            return List.of(stored);
        };
        Future<List<StoredCase>> first = threads.submit(() -> cache.caseFile(key, decode));
        assertThat(decoding.await(30, TimeUnit.SECONDS)).isTrue();
        Thread[] second = new Thread[1];
        CountDownLatch started = new CountDownLatch(1);
        Future<List<StoredCase>> other = threads.submit(() -> {
            second[0] = Thread.currentThread();
            started.countDown();
            return cache.caseFile(key, decode);
        });
        assertThat(started.await(30, TimeUnit.SECONDS)).isTrue();
        awaitWaiting(second[0]);
        release.countDown();

        assertThat(first.get(30, TimeUnit.SECONDS)).containsExactly(stored);
        assertThat(other.get(30, TimeUnit.SECONDS)).isSameAs(first.get());
        assertThat(decodes).hasValue(1);
        assertThat(cache.stats().misses()).isEqualTo(1);
        assertThat(cache.stats().files()).isEqualTo(1);
    }

    @Test
    void whenTheFirstDecodingFailsAWaitingReaderDecodesOnItsOwn_andAFailureIsNeverRetained() throws Exception {
        DecodedFileCache cache = new DecodedFileCache(DecodedFileCache.DEFAULT_MAX_CHARGED_BYTES);
        CountDownLatch decoding = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        Supplier<List<StoredCase>> failing = () -> {
            decoding.countDown();
            try {
                release.await();
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
            throw new DatasetDamagedException(key.ref().key(), "damaged");
        };
        AtomicInteger ownDecodes = new AtomicInteger();
        Future<List<StoredCase>> first = threads.submit(() -> cache.caseFile(key, failing));
        assertThat(decoding.await(30, TimeUnit.SECONDS)).isTrue();
        Thread[] second = new Thread[1];
        CountDownLatch started = new CountDownLatch(1);
        Future<List<StoredCase>> other = threads.submit(() -> {
            second[0] = Thread.currentThread();
            started.countDown();
            return cache.caseFile(key, () -> {
                ownDecodes.incrementAndGet();
                return List.of(stored);
            });
        });
        assertThat(started.await(30, TimeUnit.SECONDS)).isTrue();
        awaitWaiting(second[0]);
        release.countDown();

        assertThatThrownBy(() -> first.get(30, TimeUnit.SECONDS)).hasCauseInstanceOf(DatasetDamagedException.class);
        assertThat(other.get(30, TimeUnit.SECONDS)).containsExactly(stored);
        assertThat(ownDecodes).hasValue(1);
        assertThat(cache.stats().files()).isEqualTo(1); // the waiting reader's own outcome
    }
}
