package dev.vigilo.common.concurrent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The group commit's contract: followers share a leader's commit, batches in arrival order within the limits, every
 * item committed once, a failed batch's failure in every caller of it, the gather window, interrupts and close.
 * Every wait is for an event (a latch, a queued count, a thread parked), bounded so that a broken queue fails instead
 * of hanging.
 */
class GroupCommitTest {
    private static final long BOUND_SECONDS = 30;

    private final ExecutorService pool = Executors.newCachedThreadPool(Threads.daemonFactory("group-commit-test"));

    @AfterEach
    void stop() {
        pool.shutdownNow();
    }

    /** A committer that records its batches, completes each item with "item!" and blocks the commits told to. */
    private static class Recorder implements GroupCommit.Committer<String, String> {
        final List<List<String>> batches = Collections.synchronizedList(new ArrayList<>());
        final AtomicInteger inCommit = new AtomicInteger();
        final AtomicBoolean overlapped = new AtomicBoolean();
        /** Commits that hold on their first item until released. */
        final Map<String, CountDownLatch> holds = new ConcurrentHashMap<>();

        final Map<String, CountDownLatch> entered = new ConcurrentHashMap<>();

        CountDownLatch hold(String firstItem) {
            entered.put(firstItem, new CountDownLatch(1));
            CountDownLatch release = new CountDownLatch(1);
            holds.put(firstItem, release);
            return release;
        }

        @Override
        public void commit(GroupCommit.Batch<String, String> batch) throws Exception {
            if (inCommit.incrementAndGet() != 1) {
                overlapped.set(true);
            }
            try {
                batches.add(batch.items());
                CountDownLatch in = entered.get(batch.item(0));
                if (in != null) {
                    in.countDown();
                }
                CountDownLatch release = holds.get(batch.item(0));
                if (release != null && !release.await(BOUND_SECONDS, TimeUnit.SECONDS)) {
                    throw new AssertionError("commit of " + batch.items() + " never released");
                }
                onCommit(batch);
                for (int i = 0; i < batch.size(); i++) {
                    batch.complete(i, batch.item(i) + "!");
                }
            } finally {
                inCommit.decrementAndGet();
            }
        }

        void onCommit(GroupCommit.Batch<String, String> batch) throws Exception {}

        void awaitEntered(String firstItem) throws InterruptedException {
            assertThat(entered.get(firstItem).await(BOUND_SECONDS, TimeUnit.SECONDS))
                    .as("commit starting with " + firstItem)
                    .isTrue();
        }
    }

    private Future<String> submit(GroupCommit<String, String> g, String item) {
        return pool.submit(() -> g.submit(item));
    }

    private static void awaitCondition(String what, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(BOUND_SECONDS);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("never happened: " + what);
            }
            Thread.sleep(1);
        }
    }

    /** A commit held on its first item until {@code release} is counted down. */
    private record Held(Future<String> outcome, CountDownLatch release) {}

    /** Submits {@code first} and returns once its commit has started, held until the returned latch is released. */
    private Held holdCommitOf(Recorder r, GroupCommit<String, String> g, String first) throws InterruptedException {
        CountDownLatch release = r.hold(first);
        Future<String> outcome = submit(g, first);
        r.awaitEntered(first);
        return new Held(outcome, release);
    }

    /** Submits {@code items} one after the other, each once the previous one is queued behind the held commit. */
    private List<Future<String>> queueBehind(GroupCommit<String, String> g, String... items)
            throws InterruptedException {
        List<Future<String>> out = new ArrayList<>();
        int before = g.queued();
        for (String item : items) {
            out.add(submit(g, item));
            int expected = before + out.size();
            awaitCondition(item + " queued", () -> g.queued() == expected);
        }
        return out;
    }

    private static <V> V result(Future<V> f) throws Exception {
        return f.get(BOUND_SECONDS, TimeUnit.SECONDS);
    }

    private static Throwable failure(Future<?> f) throws Exception {
        try {
            f.get(BOUND_SECONDS, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            return e.getCause();
        }
        throw new AssertionError("expected a failure");
    }

    @Test
    void itemsArrivingDuringACommitShareTheNextOneInArrivalOrder() throws Exception {
        Recorder r = new Recorder();
        GroupCommit<String, String> g = GroupCommit.builder("test", r).build();
        Held a = holdCommitOf(r, g, "a");
        List<Future<String>> followers = queueBehind(g, "b", "c", "d");
        a.release().countDown();

        assertThat(result(a.outcome())).isEqualTo("a!");
        assertThat(result(followers.get(0))).isEqualTo("b!");
        assertThat(result(followers.get(1))).isEqualTo("c!");
        assertThat(result(followers.get(2))).isEqualTo("d!");
        assertThat(r.batches).containsExactly(List.of("a"), List.of("b", "c", "d"));
        assertThat(r.overlapped).isFalse();
    }

    @Test
    void batchesKeepToTheItemAndWeightLimitsAndALeaderWhoseItemDidNotFitLeadsAgain() throws Exception {
        Recorder r = new Recorder();
        // weight: the item's length; "long-item" (9) fits only alone
        GroupCommit<String, String> g = GroupCommit.builder("test", r)
                .maxItems(3)
                .maxWeight(4, String::length)
                .build();
        Held a = holdCommitOf(r, g, "a");
        List<Future<String>> rest = queueBehind(g, "b", "c", "long-item", "d", "e", "f", "g");
        a.release().countDown();
        for (Future<String> f : rest) {
            result(f);
        }
        result(a.outcome());
        // whichever waiting thread leads next, batches are taken from the head of the queue in arrival order
        assertThat(r.batches)
                .containsExactly(
                        List.of("a"), List.of("b", "c"), List.of("long-item"), List.of("d", "e", "f"), List.of("g"));
    }

    @Test
    void maxItemsOneCommitsEveryItemAlone() throws Exception {
        Recorder r = new Recorder();
        GroupCommit<String, String> g =
                GroupCommit.builder("test", r).maxItems(1).build();
        Held a = holdCommitOf(r, g, "a");
        List<Future<String>> rest = queueBehind(g, "b", "c");
        a.release().countDown();
        assertThat(result(rest.get(1))).isEqualTo("c!");
        result(rest.get(0));
        result(a.outcome());
        assertThat(r.batches).containsExactly(List.of("a"), List.of("b"), List.of("c"));
    }

    @Test
    void aFailedCommitFailsEveryItemOfItsBatchAndOnlyThose() throws Exception {
        RuntimeException boom = new IllegalStateException("disk on fire");
        Recorder r = new Recorder() {
            @Override
            void onCommit(GroupCommit.Batch<String, String> batch) {
                if (batch.items().contains("c")) {
                    throw boom;
                }
            }
        };
        GroupCommit<String, String> g = GroupCommit.builder("test", r).build();
        Held a = holdCommitOf(r, g, "a");
        List<Future<String>> failing = queueBehind(g, "b", "c", "d");
        a.release().countDown();
        assertThat(result(a.outcome())).isEqualTo("a!");
        for (Future<String> f : failing) {
            assertThat(failure(f)).isSameAs(boom);
        }
        // the queue goes on after a failed batch
        assertThat(result(submit(g, "e"))).isEqualTo("e!");
        assertThat(r.batches).containsExactly(List.of("a"), List.of("b", "c", "d"), List.of("e"));
    }

    @Test
    void aCheckedFailureReachesEveryCallerThroughTheTranslationAndARefusalStandsAlone() throws Exception {
        Recorder r = new Recorder() {
            @Override
            void onCommit(GroupCommit.Batch<String, String> batch) throws IOException {
                for (int i = 0; i < batch.size(); i++) {
                    if (batch.item(i).equals("refused")) {
                        batch.refuse(i, new IllegalArgumentException("not this one"));
                    }
                }
                if (batch.items().contains("io")) {
                    throw new IOException("fsync failed");
                }
            }
        };
        GroupCommit<String, String> g = GroupCommit.builder("test", r)
                .failures(t -> new UncheckedIOException("durability unknown: " + t.getMessage(), (IOException) t))
                .build();
        Held a = holdCommitOf(r, g, "a");
        List<Future<String>> batch = queueBehind(g, "b", "refused", "io");
        a.release().countDown();
        result(a.outcome());
        Throwable b = failure(batch.get(0));
        Throwable io = failure(batch.get(2));
        assertThat(b).isInstanceOf(UncheckedIOException.class).hasMessage("durability unknown: fsync failed");
        assertThat(io).isInstanceOf(UncheckedIOException.class).isNotSameAs(b);
        assertThat(failure(batch.get(1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("not this one");

        // a refusal in a batch that commits fails that item alone
        Held x = holdCommitOf(r, g, "x");
        List<Future<String>> second = queueBehind(g, "y", "refused", "z");
        x.release().countDown();
        result(x.outcome());
        assertThat(result(second.get(0))).isEqualTo("y!");
        assertThat(failure(second.get(1))).isInstanceOf(IllegalArgumentException.class);
        assertThat(result(second.get(2))).isEqualTo("z!");
    }

    @Test
    void anErrorIsRethrownUnchangedByTheLeaderAndTranslatedForItsFollowers() throws Exception {
        AssertionError fatal = new AssertionError("out of native memory");
        Recorder r = new Recorder() {
            @Override
            void onCommit(GroupCommit.Batch<String, String> batch) {
                if (batch.item(0).equals("a")) {
                    throw fatal;
                }
            }
        };
        GroupCommit<String, String> g = GroupCommit.builder("test", r)
                .failures(t -> new IllegalStateException("another caller's commit failed", t))
                .build();
        Held a = holdCommitOf(r, g, "a");
        a.release().countDown();
        assertThat(failure(a.outcome())).isSameAs(fatal);

        // a follower of a batch that hit an Error gets the translation
        Held p = holdCommitOf(r, g, "p");
        r.holds.put("a", new CountDownLatch(0));
        // "a" leads the next batch again and hits the Error; "q" follows it
        List<Future<String>> next = queueBehind(g, "a", "q");
        p.release().countDown();
        result(p.outcome());
        Throwable first = failure(next.get(0));
        Throwable second = failure(next.get(1));
        Throwable leader = first == fatal ? first : second;
        Throwable follower = first == fatal ? second : first;
        assertThat(leader).isSameAs(fatal);
        assertThat(follower).isInstanceOf(IllegalStateException.class).hasCause(fatal);
    }

    @Test
    void manyThreadsLoseAndDuplicateNothingAndKeepEachThreadsOrder() throws Exception {
        int threads = 8, per = 400;
        List<String> committed = Collections.synchronizedList(new ArrayList<>());
        AtomicInteger inCommit = new AtomicInteger();
        AtomicBoolean overlapped = new AtomicBoolean();
        AtomicInteger commits = new AtomicInteger();
        GroupCommit<String, String> g = GroupCommit.<String, String>builder("test", batch -> {
                    if (inCommit.incrementAndGet() != 1) {
                        overlapped.set(true);
                    }
                    commits.incrementAndGet();
                    for (int i = 0; i < batch.size(); i++) {
                        committed.add(batch.item(i));
                        batch.complete(i, batch.item(i).toUpperCase());
                    }
                    inCommit.decrementAndGet();
                })
                .maxItems(16)
                .gather(Duration.ofMillis(1))
                .build();
        CountDownLatch go = new CountDownLatch(1);
        List<Future<?>> done = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int thread = t;
            done.add(pool.submit(() -> {
                go.await();
                for (int i = 0; i < per; i++) {
                    String item = "t" + thread + "-" + i;
                    assertThat(g.submit(item)).isEqualTo(item.toUpperCase());
                }
                return null;
            }));
        }
        go.countDown();
        for (Future<?> f : done) {
            result(f);
        }
        g.close();
        assertThat(overlapped).as("commits overlapped").isFalse();
        assertThat(committed).hasSize(threads * per);
        Set<String> distinct = new HashSet<>(committed);
        assertThat(distinct).hasSize(threads * per);
        for (int t = 0; t < threads; t++) {
            String prefix = "t" + t + "-";
            List<String> mine =
                    committed.stream().filter(s -> s.startsWith(prefix)).toList();
            for (int i = 0; i < per; i++) {
                assertThat(mine.get(i)).isEqualTo(prefix + i);
            }
        }
        assertThat(commits.get()).isLessThanOrEqualTo(threads * per);
    }

    @Test
    void aNewLeaderGathersAsManyItemsAsTheLastBatchHeld() throws Exception {
        Recorder r = new Recorder();
        // a window far longer than the test: the leader stops gathering when the third item arrives, not on time
        GroupCommit<String, String> g =
                GroupCommit.builder("test", r).gather(Duration.ofMinutes(10)).build();
        Held a = holdCommitOf(r, g, "a");
        List<Future<String>> three = queueBehind(g, "b", "c", "d");
        a.release().countDown();
        for (Future<String> f : three) {
            result(f);
        }
        result(a.outcome());
        // the last batch held 3: x's thread leads and gathers; had it not waited, it would have committed [x] alone
        Thread[] leader = new Thread[1];
        Future<String> x = pool.submit(() -> {
            leader[0] = Thread.currentThread();
            return g.submit("x");
        });
        awaitCondition(
                "x's leader gathering, or [x] committed alone",
                () -> r.batches.size() > 2
                        || (leader[0] != null
                                && leader[0].getState() == Thread.State.TIMED_WAITING
                                && g.queued() == 1));
        assertThat(r.batches).hasSize(2);
        Future<String> y = queueBehind(g, "y").get(0);
        // the third item ends the gathering: the leader takes the batch at once (queued() never shows 3)
        Future<String> z = submit(g, "z");
        result(x);
        result(y);
        result(z);
        assertThat(r.batches.get(2)).containsExactly("x", "y", "z");
    }

    @Test
    void theGatherWindowIsBounded() throws Exception {
        Recorder r = new Recorder();
        GroupCommit<String, String> g =
                GroupCommit.builder("test", r).gather(Duration.ofMillis(20)).build();
        Held a = holdCommitOf(r, g, "a");
        List<Future<String>> two = queueBehind(g, "b", "c");
        a.release().countDown();
        result(two.get(0));
        result(two.get(1));
        result(a.outcome());
        // nobody else comes: the lone item is committed once the window has passed
        assertThat(result(submit(g, "x"))).isEqualTo("x!");
        assertThat(r.batches).containsExactly(List.of("a"), List.of("b", "c"), List.of("x"));
    }

    /** "a"'s commit held, "b" submitted behind it on its own thread, which is then interrupted. */
    private record InterruptedFollower(Held a, Future<String> b, Thread thread, AtomicBoolean flagKept) {}

    private InterruptedFollower interruptAFollower(Recorder r, GroupCommit<String, String> g)
            throws InterruptedException {
        Held a = holdCommitOf(r, g, "a");
        Thread[] follower = new Thread[1];
        AtomicBoolean flagKept = new AtomicBoolean();
        Future<String> b = pool.submit(() -> {
            follower[0] = Thread.currentThread();
            try {
                return g.submit("b");
            } finally {
                flagKept.set(Thread.currentThread().isInterrupted());
            }
        });
        awaitCondition("b queued", () -> g.queued() == 1);
        follower[0].interrupt();
        return new InterruptedFollower(a, b, follower[0], flagKept);
    }

    @Test
    void anInterruptedFollowerWithdrawsItsQueuedItemWhenInterruptible() throws Exception {
        Recorder r = new Recorder();
        GroupCommit<String, String> g = GroupCommit.builder("test", r)
                .interruptible(e -> new IllegalStateException("interrupted; outcome unknown", e))
                .build();
        InterruptedFollower f = interruptAFollower(r, g);
        assertThat(failure(f.b())).isInstanceOf(IllegalStateException.class).hasMessage("interrupted; outcome unknown");
        assertThat(f.flagKept()).isTrue();
        assertThat(g.queued()).isZero();
        f.a().release().countDown();
        result(f.a().outcome());
        assertThat(result(submit(g, "c"))).isEqualTo("c!");
        assertThat(r.batches).containsExactly(List.of("a"), List.of("c"));
    }

    @Test
    void anInterruptedFollowerKeepsWaitingWhenNotInterruptible() throws Exception {
        Recorder r = new Recorder();
        GroupCommit<String, String> g = GroupCommit.builder("test", r).build();
        InterruptedFollower f = interruptAFollower(r, g);
        awaitCondition(
                "the interrupted follower waiting again (its flag kept aside until it returns), or failing",
                () -> f.b().isDone() || f.thread().getState() == Thread.State.WAITING);
        f.a().release().countDown();
        assertThat(result(f.b())).isEqualTo("b!");
        assertThat(f.flagKept()).isTrue();
        result(f.a().outcome());
        assertThat(r.batches).containsExactly(List.of("a"), List.of("b"));
    }

    @Test
    void closeWaitsForEverySubmittedItemAndRefusesLaterOnes() throws Exception {
        AtomicBoolean lastCommitEnded = new AtomicBoolean();
        Recorder r = new Recorder() {
            @Override
            void onCommit(GroupCommit.Batch<String, String> batch) {
                if (batch.items().contains("b")) {
                    lastCommitEnded.set(true);
                }
            }
        };
        GroupCommit<String, String> g =
                GroupCommit.builder("writer for x.log", r).build();
        Held a = holdCommitOf(r, g, "a");
        Future<String> b = queueBehind(g, "b").get(0);
        Thread[] closer = new Thread[1];
        CountDownLatch closing = new CountDownLatch(1);
        Future<Boolean> closed = pool.submit(() -> {
            closer[0] = Thread.currentThread();
            closing.countDown();
            g.close();
            return lastCommitEnded.get();
        });
        assertThat(closing.await(BOUND_SECONDS, TimeUnit.SECONDS)).isTrue();
        awaitCondition("close waiting", () -> closer[0].getState() == Thread.State.WAITING);
        a.release().countDown();
        assertThat(result(closed)).as("b's commit ended before close returned").isTrue();
        assertThatThrownBy(() -> g.submit("late"))
                .isInstanceOf(IllegalStateException.class)
                .hasMessage("writer for x.log is closed");
        assertThat(result(b)).isEqualTo("b!");
        result(a.outcome());
        assertThat(r.batches).containsExactly(List.of("a"), List.of("b"));
    }
}
