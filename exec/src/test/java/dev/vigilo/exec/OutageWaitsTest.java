package dev.vigilo.exec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vigilo.common.errors.CancelledException;
import dev.vigilo.common.errors.DamagedException;
import dev.vigilo.common.errors.UnavailableException;
import dev.vigilo.common.retry.RetryPolicy;
import dev.vigilo.exec.worker.Worker;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** Waiting out outages: as long as they last, one begin and one end per outage, other failures not retried. */
class OutageWaitsTest {
    private static final RetryPolicy FAST =
            RetryPolicy.of(Integer.MAX_VALUE, Duration.ofMillis(1), Duration.ofMillis(2));

    /** Records the listener's outage events as text. */
    static final class Events implements Worker.Listener {
        final List<String> events = new CopyOnWriteArrayList<>();

        @Override
        public void outageBegan(Service service, String target, Instant since, String error) {
            events.add("began " + service.wire() + " " + target + ": " + error);
        }

        @Override
        public void outageWaited(Service service, String target, int failures) {
            events.add("waited " + failures);
        }

        @Override
        public void outageEnded(Service service, String target, Duration lasted) {
            events.add("ended " + service.wire() + " " + target);
        }
    }

    @Test
    void waitsAsLongAsTheOutageLastsThenCarriesOn() {
        Events seen = new Events();
        AtomicInteger changes = new AtomicInteger();
        OutageWaits waits = new OutageWaits(FAST, seen, changes::incrementAndGet);
        AtomicInteger calls = new AtomicInteger();
        String result = waits.await(Service.STORE, "local:/s", attempt -> {
            if (calls.incrementAndGet() <= 40) {
                throw new UnavailableException("cannot write /s/k: No space left on device; password=hunter2");
            }
            assertThat(waits.current()).singleElement().satisfies(c -> {
                assertThat(c.service()).isEqualTo(Service.STORE);
                assertThat(c.target()).isEqualTo("local:/s");
                assertThat(c.error()).doesNotContain("hunter2");
            });
            return "done@" + attempt;
        });
        assertThat(result).isEqualTo("done@41");
        assertThat(seen.events).hasSize(1 + 40 + 1);
        assertThat(seen.events.get(0))
                .isEqualTo("began store local:/s: cannot write /s/k: No space left on device; password=***");
        assertThat(seen.events.get(1)).isEqualTo("waited 1");
        assertThat(seen.events.get(40)).isEqualTo("waited 40");
        assertThat(seen.events.get(41)).isEqualTo("ended store local:/s");
        assertThat(waits.current()).isEmpty();
        assertThat(changes).hasValue(2);
    }

    @Test
    void otherFailuresAndOutagesOfAnotherServiceAreNotRetried() {
        Events seen = new Events();
        OutageWaits waits = new OutageWaits(FAST, seen, () -> {});
        AtomicInteger calls = new AtomicInteger();
        assertThatThrownBy(() -> waits.await(Service.STORE, "s", attempt -> {
                    calls.incrementAndGet();
                    throw new DamagedException("altered");
                }))
                .isInstanceOf(DamagedException.class);
        assertThat(calls).hasValue(1);
        // A database failure reaching a store operation is not the store's outage.
        assertThatThrownBy(() -> waits.await(Service.STORE, "s", attempt -> {
                    calls.incrementAndGet();
                    throw new UnavailableException(
                            "x", new org.jdbi.v3.core.ConnectionException(new java.sql.SQLException("down", "08006")));
                }))
                .isInstanceOf(UnavailableException.class);
        assertThat(calls).hasValue(2);
        assertThat(seen.events).isEmpty();
    }

    @Test
    void concurrentWaitersShareOneOutageWhichEndsWithTheFirstSuccess() throws Exception {
        Events seen = new Events();
        OutageWaits waits = new OutageWaits(FAST, seen, () -> {});
        CountDownLatch bothFailed = new CountDownLatch(2);
        AtomicReference<Boolean> up = new AtomicReference<>(false);
        Runnable waiter = () -> waits.await(Service.DATABASE, "b", attempt -> {
            if (!up.get()) {
                if (attempt == 1) {
                    bothFailed.countDown();
                }
                throw new UnavailableException("x", new java.sql.SQLTransientConnectionException("pool timeout"));
            }
            return null;
        });
        Thread a = new Thread(waiter);
        Thread b = new Thread(waiter);
        a.start();
        b.start();
        assertThat(bothFailed.await(10, TimeUnit.SECONDS)).isTrue();
        // Each waiter records the outage after its attempt threw, so the failures alone do not mean it is recorded:
        // wait for the record (both failed on the same target: one outage).
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (waits.current().isEmpty() && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
        assertThat(waits.current()).hasSize(1);
        up.set(true);
        a.join(10_000);
        b.join(10_000);
        // One outage while both failed, ended by the first success. A waiter whose attempt read "down" just before the
        // flip fails after that success: its failure begins a new outage, which its own next success ends (the
        // service did fail again after answering). So: began, ended, and at most once more began, ended.
        List<String> changes = seen.events.stream()
                .filter(e -> e.startsWith("began") || e.startsWith("ended"))
                .toList();
        assertThat(changes.size()).as("%s", changes).isIn(2, 4);
        for (int i = 0; i < changes.size(); i++) {
            assertThat(changes.get(i)).as("%s", changes).startsWith(i % 2 == 0 ? "began" : "ended");
        }
        assertThat(waits.current()).isEmpty();
    }

    @Test
    void anInterruptEndsTheWaitAndNothingWaitsAnyMore() throws Exception {
        Events seen = new Events();
        OutageWaits waits = new OutageWaits(
                RetryPolicy.of(Integer.MAX_VALUE, Duration.ofMillis(50), Duration.ofMillis(50)), seen, () -> {});
        CountDownLatch failing = new CountDownLatch(1);
        AtomicReference<Throwable> ended = new AtomicReference<>();
        Thread t = new Thread(() -> {
            try {
                waits.await(Service.STORE, "s", attempt -> {
                    failing.countDown();
                    throw new UnavailableException("down");
                });
            } catch (RuntimeException e) {
                ended.set(e);
            }
        });
        t.start();
        assertThat(failing.await(10, TimeUnit.SECONDS)).isTrue();
        t.interrupt();
        t.join(10_000);
        assertThat(ended.get()).isInstanceOf(CancelledException.class);
        assertThat(waits.current()).isEmpty();
        assertThat(seen.events).last().isEqualTo("ended store s");
    }

    @Test
    void aProbeLogsAnOutageOnceAndEndsItWithItsNextSuccess() {
        Events seen = new Events();
        OutageWaits waits = new OutageWaits(FAST, seen, () -> {});
        OutageWaits.Probe probe = waits.probe(Service.DATABASE, "control");
        RuntimeException down = new UnavailableException("x", new java.sql.SQLException("refused", "08001"));
        assertThat(probe.failed(down)).isTrue();
        assertThat(probe.failed(down)).isTrue();
        assertThat(probe.failed(down)).isTrue();
        assertThat(probe.failures()).isEqualTo(3);
        assertThat(probe.failed(new IllegalStateException("a bug"))).isFalse();
        assertThat(probe.failures()).isZero();
        assertThat(seen.events)
                .containsExactly("began database control: x", "waited 1", "waited 2", "ended database control");
        assertThat(waits.backoff(5)).isEqualTo(Duration.ofMillis(2));
    }
}
