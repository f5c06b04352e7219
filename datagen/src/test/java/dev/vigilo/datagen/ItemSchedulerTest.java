package dev.vigilo.datagen;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vigilo.common.errors.CancelledException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.BrokenBarrierException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class ItemSchedulerTest {
    static List<Integer> range(int n) {
        return IntStream.range(0, n).boxed().toList();
    }

    @Test
    void runsExactlyWorkersItemsAtOnce() {
        int workers = 3;
        AtomicInteger active = new AtomicInteger();
        AtomicInteger maxActive = new AtomicInteger();
        // Each task waits until `workers` tasks run at once: fewer workers would time the barrier
        // out, more would show in maxActive.
        CyclicBarrier together = new CyclicBarrier(workers);
        List<Integer> ran = Collections.synchronizedList(new ArrayList<>());
        ItemScheduler.runAll(
                workers,
                range(12),
                item -> {
                    maxActive.accumulateAndGet(active.incrementAndGet(), Math::max);
                    try {
                        together.await(10, TimeUnit.SECONDS);
                    } catch (BrokenBarrierException | TimeoutException e) {
                        throw new IllegalStateException("fewer than " + workers + " items ran at once", e);
                    } finally {
                        active.decrementAndGet();
                    }
                    ran.add(item);
                    return List.of();
                },
                (item, spawned) -> {});
        assertThat(maxActive.get()).isEqualTo(workers);
        assertThat(ran).containsExactlyInAnyOrderElementsOf(range(12));
    }

    @Test
    void spawnedItemsRunTooAndTheListenerHearsEachItemOnceOnTheCallingThread() {
        Thread caller = Thread.currentThread();
        List<Integer> heard = new ArrayList<>(); // touched by the listener only: no lock on purpose
        List<Thread> listenerThreads = new ArrayList<>();
        ConcurrentHashMap<Integer, String> workerThreads = new ConcurrentHashMap<>();
        ItemScheduler.runAll(
                2,
                List.of(1, 2),
                item -> {
                    workerThreads.put(item, Thread.currentThread().getName());
                    // 1 -> 10, 11 -> 100..101, 110..111; 2 -> 20, 21 -> ...; stops at three digits
                    return item >= 100 ? List.of() : List.of(item * 10, item * 10 + 1);
                },
                (item, spawned) -> {
                    heard.add(item);
                    listenerThreads.add(Thread.currentThread());
                    assertThat(spawned).isEqualTo(item >= 100 ? List.of() : List.of(item * 10, item * 10 + 1));
                });
        assertThat(heard).containsExactlyInAnyOrder(1, 2, 10, 11, 20, 21, 100, 101, 110, 111, 200, 201, 210, 211);
        assertThat(listenerThreads).containsOnly(caller);
        assertThat(workerThreads.values()).allMatch(name -> name.matches("vigilo-datagen-worker-\\d+"));
    }

    @Test
    void theFirstFailureStopsTheRunInterruptsWorkersAndIsRethrown() {
        IllegalStateException boom = new IllegalStateException("boom");
        CountDownLatch othersStarted = new CountDownLatch(1);
        AtomicInteger interrupted = new AtomicInteger();
        List<Integer> heard = Collections.synchronizedList(new ArrayList<>());
        long start = System.nanoTime();
        assertThatThrownBy(() -> ItemScheduler.runAll(
                        2,
                        range(20),
                        item -> {
                            if (item == 0) {
                                othersStarted.await(10, TimeUnit.SECONDS);
                                throw boom;
                            }
                            othersStarted.countDown();
                            try {
                                Thread.sleep(60_000); // until the stop interrupts it
                            } catch (InterruptedException e) {
                                interrupted.incrementAndGet();
                                throw e;
                            }
                            return List.of();
                        },
                        (item, spawned) -> heard.add(item)))
                .isSameAs(boom);
        assertThat(TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - start)).isLessThan(30);
        // The other worker's item, and maybe one more it took before the stop, were interrupted.
        assertThat(interrupted.get()).as("running workers interrupted").isBetween(1, 2);
        assertThat(heard).as("no item finished").isEmpty();
    }

    @Test
    void interruptingTheCallerStopsTheRun() throws Exception {
        CountDownLatch running = new CountDownLatch(1);
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        AtomicReference<Boolean> stillInterrupted = new AtomicReference<>();
        Thread caller = new Thread(() -> {
            try {
                ItemScheduler.runAll(
                        1,
                        List.of(1),
                        item -> {
                            running.countDown();
                            Thread.sleep(60_000);
                            return List.of();
                        },
                        (item, spawned) -> {});
            } catch (Throwable t) {
                thrown.set(t);
                stillInterrupted.set(Thread.currentThread().isInterrupted());
            }
        });
        caller.start();
        assertThat(running.await(10, TimeUnit.SECONDS)).isTrue();
        caller.interrupt();
        caller.join(30_000);
        assertThat(caller.isAlive()).isFalse();
        assertThat(thrown.get()).isInstanceOf(CancelledException.class).hasMessage("interrupted");
        assertThat(stillInterrupted.get()).isTrue();
    }

    @Test
    void workersMustBePositive() {
        assertThatThrownBy(() -> ItemScheduler.runAll(0, List.of(1), item -> List.of(), (item, spawned) -> {}))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
