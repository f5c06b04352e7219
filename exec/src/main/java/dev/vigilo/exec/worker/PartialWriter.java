package dev.vigilo.exec.worker;

import dev.vigilo.common.errors.CancelledException;
import dev.vigilo.exec.record.ChunkTables;
import dev.vigilo.exec.record.PartialReceipt;
import dev.vigilo.exec.record.PartialReceiptParser;
import dev.vigilo.exec.record.Receipt;
import dev.vigilo.storage.Deadline;
import dev.vigilo.storage.ObjectRef;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes one held chunk's partial receipt chain (docs/execution.md, "Resume from partial receipts"): case threads
 * hand it each finished case entry ({@link #finished}); a link is written and referenced from the chunk row when
 * {@value #BATCH} entries wait (by the case thread that made them {@value #BATCH}) or when entries waited for a
 * second (the worker's {@code partialFlush}; by the executor's flush ticker, {@link #tick}). At most {@value #BATCH} finished entries are ever not yet
 * referenced by the row: a case thread that would make them more waits until the link being written is referenced,
 * holding its case slot, so a kill redoes at most the cases holding a slot plus {@value #BATCH}.
 *
 * <p>Before a link, the chunk's transcript containers are flushed ({@link TranscriptContainers#flush}), so every
 * transcript slice a link's entries reference exists. A link that cannot be written (its containers included) or
 * referenced (an outage, a store error) is logged and its entries are left out
 * of the chain (they are still in the final receipt; a resume would only execute them again); a referenced link
 * whose update found the lease gone ends the writer (its holder is fenced anyway). Thread-safe; one link is written
 * at a time.
 */
final class PartialWriter {
    private static final Logger LOG = LoggerFactory.getLogger(PartialWriter.class);
    /** Finished entries per link at most, and the bound of entries not yet referenced. */
    static final int BATCH = 16;

    private static final Duration WRITE = Duration.ofSeconds(120);

    private final RunContext run;
    private final ChunkTables.Lease lease;
    private final UUID worker;
    private final int settlementGeneration;
    private final int epochs;
    private final PartialLink link;
    /** The longest a finished entry waits for its link (checked by the ticker); empty: full batches only. */
    private final Optional<Duration> interval;
    /** The chunk's transcript containers: flushed before each link, so a link references only written slices. */
    private final Optional<TranscriptContainers> containers;

    private final Object lock = new Object();
    /** Finished entries not yet referenced (in finishing order); those of the link being written come first. */
    private final List<Receipt.CaseResult> pending = new ArrayList<>();

    private boolean flushing;
    private boolean stopped;
    private long lastFlush = System.nanoTime();
    /** The chain's newest written link (empty before the first), its sequence and its entries in all. */
    private Optional<ObjectRef> head;

    private int sequence;
    private int chained;

    /**
     * A writer continuing {@code carried} (the verified chain a resumed chunk carries forward), or starting a new
     * chain when it is empty.
     */
    PartialWriter(
            RunContext run,
            ChunkTables.Lease lease,
            UUID worker,
            int settlementGeneration,
            int epochs,
            Optional<dev.vigilo.exec.record.PartialChain.Chain> carried,
            PartialLink link,
            Optional<Duration> interval,
            Optional<TranscriptContainers> containers) {
        this.run = run;
        this.lease = lease;
        this.worker = worker;
        this.settlementGeneration = settlementGeneration;
        this.epochs = epochs;
        this.link = link;
        this.interval = interval;
        this.containers = containers;
        this.head = carried.map(dev.vigilo.exec.record.PartialChain.Chain::head);
        this.sequence =
                carried.map(dev.vigilo.exec.record.PartialChain.Chain::sequence).orElse(0);
        this.chained = carried.map(c -> c.entries().size()).orElse(0);
    }

    /**
     * A case thread's finished case entry (all its epochs). Waits while {@value #BATCH} entries are not referenced
     * yet; writes the link itself when its entry makes them {@value #BATCH}.
     *
     * @throws CancelledException when interrupted while waiting
     */
    void finished(Receipt.CaseResult entry) {
        synchronized (lock) {
            while (pending.size() >= BATCH && !stopped) {
                try {
                    lock.wait();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new CancelledException("case " + entry.id() + " was cancelled");
                }
            }
            if (stopped) {
                return;
            }
            pending.add(entry);
            if (pending.size() < BATCH || flushing) {
                return;
            }
            flushing = true;
        }
        flushWhileDue();
    }

    /** The ticker's check: writes a link when entries waited for the interval. */
    void tick() {
        synchronized (lock) {
            if (flushing
                    || stopped
                    || pending.isEmpty()
                    || interval.isEmpty()
                    || System.nanoTime() - lastFlush < interval.get().toNanos()) {
                return;
            }
            flushing = true;
        }
        flushWhileDue();
    }

    /** No further link is written; case threads waiting for one go on. */
    void stop() {
        synchronized (lock) {
            stopped = true;
            lock.notifyAll();
        }
    }

    /** Writes links while a full batch waits (entries may finish while a link is written); the caller set flushing. */
    private void flushWhileDue() {
        boolean again = true;
        while (again) {
            List<Receipt.CaseResult> batch;
            synchronized (lock) {
                batch = new ArrayList<>(pending.subList(0, Math.min(BATCH, pending.size())));
            }
            boolean keep = flush(batch);
            synchronized (lock) {
                pending.subList(0, batch.size()).clear();
                lastFlush = System.nanoTime();
                if (!keep) {
                    stopped = true;
                }
                again = !stopped && pending.size() >= BATCH;
                flushing = again;
                lock.notifyAll();
            }
        }
    }

    /**
     * Writes one link with {@code batch} and references it from the chunk row.
     *
     * @return false when the lease is gone (no further link)
     */
    private boolean flush(List<Receipt.CaseResult> batch) {
        List<Receipt.CaseResult> sorted = new ArrayList<>(batch);
        sorted.sort(Comparator.comparingLong(Receipt.CaseResult::ordinal));
        int next = sequence + 1;
        ObjectRef ref;
        try {
            // The entries' transcripts first: a link never references a slice of a container not yet created. A
            // container that cannot be written stays buffered for the next link or the final receipt.
            containers.ifPresent(TranscriptContainers::flush);
            PartialReceipt p = new PartialReceipt(
                    lease.runId(),
                    lease.chunkIndex(),
                    lease.seed().chunkId(),
                    lease.seed().shard(),
                    lease.generation(),
                    worker,
                    lease.seed().membership(),
                    settlementGeneration,
                    epochs,
                    next,
                    head,
                    Instant.now(),
                    sorted);
            ref = run.store()
                    .create(
                            PartialReceipt.key(lease.runId(), lease.chunkIndex(), lease.generation(), next),
                            PartialReceiptParser.toJson(p),
                            Deadline.after(WRITE));
        } catch (RuntimeException e) {
            if (Thread.currentThread().isInterrupted()) {
                return false;
            }
            // Its entries stay out of the chain: a resume would execute them again, nothing is lost.
            LOG.warn(
                    "chunk {} of run {}: cannot write partial receipt {} ({}); its {} cases are left out of the chain",
                    lease.chunkIndex(),
                    lease.runId(),
                    next,
                    e.getMessage(),
                    batch.size());
            return true;
        }
        head = Optional.of(ref);
        sequence = next;
        chained += batch.size();
        try {
            if (!link.reference(new ChunkTables.Partial(ref, chained))) {
                LOG.debug(
                        "chunk {} of run {}: lease gone, no further partial receipt",
                        lease.chunkIndex(),
                        lease.runId());
                return false;
            }
        } catch (RuntimeException e) {
            // The link is written and the next one names it: the next reference covers these entries too.
            LOG.warn(
                    "chunk {} of run {}: cannot reference partial receipt {} ({}); the next one will",
                    lease.chunkIndex(),
                    lease.runId(),
                    ref.key(),
                    e.getMessage());
        }
        return true;
    }
}
