package dev.vigilo.common.concurrent;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;
import java.util.function.ToLongFunction;

/**
 * The one group commit (a leader/follower queue): threads {@link #submit} items that must each be committed
 * durably (a frame written and fsynced, a MemWAL put), and items that arrive while a commit is under way share the
 * next one. The thread that finds no commit under way becomes the leader: it takes the waiting items as one batch,
 * commits them once through the {@link Committer}, completes every item of the batch (its followers' and, when it
 * fitted, its own) and wakes their callers. What a commit writes, how items are numbered, fenced or refused stays
 * with the committer.
 *
 * <p>The contract:
 *
 * <ul>
 *   <li><b>One commit at a time.</b> The committer runs on the leader's thread, never concurrently with itself and
 *       never with this class's lock held.
 *   <li><b>Batches in arrival order.</b> A batch is the head of the queue: at most {@code maxItems} items and, past
 *       the first, at most {@code maxWeight} of their weight (one heavier item is still a batch of its own). So an
 *       item a thread submits after another one is in the same or a later batch. A leader whose own item did not fit
 *       commits the batch, then leads (or follows) again; every item is committed in exactly one batch or withdrawn
 *       (below), never twice.
 *   <li><b>Gather window.</b> A new leader whose previous batch held {@code n > 1} items waits up to {@code gather}
 *       for {@code n} items (at most {@code maxItems}) to be queued before it takes the batch: callers released by
 *       one commit come back a little apart, and without the wait the first would commit alone while the others
 *       queue behind it. After a batch of one nobody waits; a zero window never waits.
 *   <li><b>Outcomes.</b> {@link #submit} returns when the commit of its item's batch ended. When the committer
 *       returns normally, each item gets the result the committer {@link Batch#complete completed} it with (null
 *       when none), or the failure it {@link Batch#refuse refused} it with: that item alone fails and the rest of
 *       the batch commits. When the committer throws, every item of the batch it did not refuse fails with that one
 *       failure: a {@link RuntimeException} is rethrown unchanged in every caller; an {@link Error} is rethrown
 *       unchanged by the leader that hit it, and a checked exception, or an Error in another caller, becomes the
 *       {@link RuntimeException} that {@code failures} makes of it (once per caller). A leader whose commit threw an
 *       Error before its own item was committed withdraws its item and rethrows the Error.
 *   <li><b>Interrupts.</b> Waiting callers wait uninterruptibly (the interrupt flag stays set) unless
 *       {@code interruptible} is given: then a caller interrupted while it waits for another leader withdraws its
 *       item if it is still queued (it is never committed), or leaves it to the batch under way (its outcome is then
 *       unknown to the caller), and throws what {@code interruptible} makes of the interrupt, the flag set again. A
 *       leader interrupted while gathering stops gathering and commits what has arrived (the flag set again).
 *   <li><b>Close.</b> {@link #close} refuses later submits ({@link IllegalStateException}: {@code "<name> is
 *       closed"}) and returns once every item submitted before is completed or withdrawn. Not to be called from a
 *       committer.
 * </ul>
 *
 * <p>Thread-safe. What the committer writes into an item's result or failure is visible to its caller (handed over
 * under the lock).
 *
 * @param <T> an item
 * @param <R> an item's result ({@link Void} when there is none)
 */
public final class GroupCommit<T, R> implements AutoCloseable {
    /** Commits one batch; called by one leader at a time, without this class's lock. */
    @FunctionalInterface
    public interface Committer<T, R> {
        /**
         * Commits every item of {@code batch} not refused, once, together, and completes them.
         *
         * @throws Exception when the commit failed: every item of the batch not refused fails with it
         */
        void commit(Batch<T, R> batch) throws Exception;
    }

    /** One batch as the committer sees it: its items in arrival order, and their outcomes. Not thread-safe. */
    public static final class Batch<T, R> {
        private final List<Ticket<T, R>> tickets;

        private Batch(List<Ticket<T, R>> tickets) {
            this.tickets = tickets;
        }

        /** @return the number of items, at least 1 */
        public int size() {
            return tickets.size();
        }

        /** @return item {@code i} */
        public T item(int i) {
            return tickets.get(i).item;
        }

        /** @return the items in arrival order */
        public List<T> items() {
            List<T> items = new ArrayList<>(tickets.size());
            for (Ticket<T, R> t : tickets) {
                items.add(t.item);
            }
            return Collections.unmodifiableList(items);
        }

        /** Sets item {@code i}'s result (what its {@link #submit} returns when the commit ends normally). */
        public void complete(int i, R result) {
            tickets.get(i).result = result;
        }

        /** Fails item {@code i} alone with {@code failure}, whatever happens to the rest of the batch. */
        public void refuse(int i, RuntimeException failure) {
            Ticket<T, R> t = tickets.get(i);
            t.failure = Objects.requireNonNull(failure, "failure");
            t.refused = true;
        }
    }

    /** One submitted item and, once its batch's commit ended, its outcome. Fields guarded by {@link #lock}. */
    private static final class Ticket<T, R> {
        final T item;
        boolean done;
        boolean refused;
        R result;
        Throwable failure;

        Ticket(T item) {
            this.item = item;
        }
    }

    private final String name;
    private final Committer<T, R> committer;
    private final int maxItems;
    private final long maxWeight;
    private final ToLongFunction<? super T> weigher;
    private final long gatherNanos;
    private final Function<Throwable, RuntimeException> failures;
    private final Function<InterruptedException, RuntimeException> interruptible;

    private final ReentrantLock lock = new ReentrantLock();
    /** Signalled when a commit ended (its items are done and a new leader may start) or an item was withdrawn. */
    private final Condition ended = lock.newCondition();
    /** Signalled when an item was queued (a gathering leader counts them). */
    private final Condition arrived = lock.newCondition();
    /** Items waiting for a batch, in arrival order. */
    private final ArrayDeque<Ticket<T, R>> queue = new ArrayDeque<>();
    /** Whether a leader is gathering or committing now. */
    private boolean leading;
    /** How many items the last batch held: how many a new leader gathers for. */
    private int lastBatchSize = 1;

    private boolean closed;

    private GroupCommit(Builder<T, R> b) {
        this.name = b.name;
        this.committer = b.committer;
        this.maxItems = b.maxItems;
        this.maxWeight = b.maxWeight;
        this.weigher = b.weigher;
        this.gatherNanos = b.gather.toNanos();
        this.failures = b.failures;
        this.interruptible = b.interruptible;
    }

    /**
     * A group commit of items through {@code committer}: batches of any size by default, no gather window, waits
     * that ignore interrupts, and checked failures as {@link IllegalStateException}s.
     *
     * @param name what is committed into, for messages ({@code "writer for /data/session.jsonl.zstd"})
     */
    public static <T, R> Builder<T, R> builder(String name, Committer<T, R> committer) {
        return new Builder<>(name, committer);
    }

    /** Options of a {@link GroupCommit}; see its contract. */
    public static final class Builder<T, R> {
        private final String name;
        private final Committer<T, R> committer;
        private int maxItems = Integer.MAX_VALUE;
        private long maxWeight = Long.MAX_VALUE;
        private ToLongFunction<? super T> weigher = item -> 0;
        private Duration gather = Duration.ZERO;
        private Function<Throwable, RuntimeException> failures;
        private Function<InterruptedException, RuntimeException> interruptible;

        private Builder(String name, Committer<T, R> committer) {
            this.name = Objects.requireNonNull(name, "name");
            this.committer = Objects.requireNonNull(committer, "committer");
            this.failures = t -> new IllegalStateException(name + ": commit failed: " + t, t);
        }

        /** At most {@code items} items per batch (1: every item is committed alone). */
        public Builder<T, R> maxItems(int items) {
            if (items < 1) {
                throw new IllegalArgumentException("maxItems must be >= 1, got " + items);
            }
            this.maxItems = items;
            return this;
        }

        /** A batch grows past its first item only while the items' total {@code weigher} weight stays within {@code max}. */
        public Builder<T, R> maxWeight(long max, ToLongFunction<? super T> weigher) {
            if (max < 0) {
                throw new IllegalArgumentException("maxWeight must be >= 0, got " + max);
            }
            this.maxWeight = max;
            this.weigher = Objects.requireNonNull(weigher, "weigher");
            return this;
        }

        /** The gather window (zero: none). */
        public Builder<T, R> gather(Duration window) {
            if (window.isNegative()) {
                throw new IllegalArgumentException("gather window must be >= 0, got " + window);
            }
            this.gather = window;
            return this;
        }

        /** What a caller throws for a checked failure of its batch, or for an Error another caller's commit hit. */
        public Builder<T, R> failures(Function<Throwable, RuntimeException> failures) {
            this.failures = Objects.requireNonNull(failures, "failures");
            return this;
        }

        /** Makes waits interruptible: an interrupted waiting caller throws what {@code interrupted} makes. */
        public Builder<T, R> interruptible(Function<InterruptedException, RuntimeException> interrupted) {
            this.interruptible = Objects.requireNonNull(interrupted, "interrupted");
            return this;
        }

        public GroupCommit<T, R> build() {
            return new GroupCommit<>(this);
        }
    }

    /**
     * Commits {@code item} in a batch with the items other threads submit meanwhile, leading the commit or waiting
     * for it, and returns its result; see the class contract for failures and interrupts.
     *
     * @throws IllegalStateException when {@link #close} was called
     */
    public R submit(T item) {
        Ticket<T, R> me = new Ticket<>(item);
        lock.lock();
        try {
            if (closed) {
                throw new IllegalStateException(name + " is closed");
            }
            queue.addLast(me);
            arrived.signal();
            while (true) {
                while (!me.done && leading) {
                    awaitEnded(me);
                }
                if (me.done) {
                    return outcome(me, false);
                }
                leading = true;
                gather();
                List<Ticket<T, R>> batch = take();
                lastBatchSize = batch.size();
                Throwable failure = null;
                lock.unlock();
                try {
                    committer.commit(new Batch<>(batch));
                } catch (Throwable t) {
                    failure = t;
                } finally {
                    lock.lock();
                    for (Ticket<T, R> t : batch) {
                        if (failure != null && !t.refused) {
                            t.failure = failure;
                        }
                        t.done = true;
                    }
                    leading = false;
                    ended.signalAll();
                }
                if (me.done) {
                    return outcome(me, true);
                }
                if (failure instanceof Error error) {
                    queue.remove(me);
                    ended.signalAll();
                    throw error;
                }
            }
        } finally {
            lock.unlock();
        }
    }

    /** Items queued for a batch and not yet taken by a leader (for tests and metrics). */
    public int queued() {
        lock.lock();
        try {
            return queue.size();
        } finally {
            lock.unlock();
        }
    }

    /** Refuses later submits and waits until every item submitted before is completed or withdrawn. Idempotent. */
    @Override
    public void close() {
        lock.lock();
        try {
            closed = true;
            while (leading || !queue.isEmpty()) {
                ended.awaitUninterruptibly();
            }
        } finally {
            lock.unlock();
        }
    }

    private R outcome(Ticket<T, R> t, boolean leader) {
        Throwable f = t.failure;
        if (f == null) {
            return t.result;
        }
        if (f instanceof RuntimeException r) {
            throw r;
        }
        if (f instanceof Error e && leader) {
            throw e;
        }
        throw failures.apply(f);
    }

    /** Waits for the commit under way to end. Caller holds {@link #lock}. */
    private void awaitEnded(Ticket<T, R> me) {
        if (interruptible == null) {
            ended.awaitUninterruptibly();
            return;
        }
        try {
            ended.await();
        } catch (InterruptedException e) {
            if (queue.remove(me)) {
                ended.signalAll(); // close() may be waiting for the queue to empty
            }
            Thread.currentThread().interrupt();
            throw interruptible.apply(e);
        }
    }

    /** The gather window (see the class contract). Caller holds {@link #lock}. */
    private void gather() {
        if (gatherNanos == 0 || lastBatchSize <= 1) {
            return;
        }
        int want = Math.min(lastBatchSize, maxItems);
        long left = gatherNanos;
        while (queue.size() < want && left > 0) {
            try {
                left = arrived.awaitNanos(left);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return; // gathering is an optimization: commit what has arrived
            }
        }
    }

    /** The next batch: the head of the queue within the limits. Caller holds {@link #lock}. */
    private List<Ticket<T, R>> take() {
        List<Ticket<T, R>> batch = new ArrayList<>();
        long weight = 0;
        while (!queue.isEmpty() && batch.size() < maxItems) {
            long next = weigher.applyAsLong(queue.peekFirst().item);
            if (!batch.isEmpty() && weight + next > maxWeight) {
                break;
            }
            batch.add(queue.pollFirst());
            weight += next;
        }
        return batch;
    }
}
