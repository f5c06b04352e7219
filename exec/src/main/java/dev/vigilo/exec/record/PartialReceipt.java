package dev.vigilo.exec.record;

import dev.vigilo.storage.ObjectKey;
import dev.vigilo.storage.ObjectRef;
import dev.vigilo.storage.Sha256;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;

/**
 * One link of a chunk's partial receipt chain, format {@code vigilo.exec.partial-receipt} version 1
 * (docs/formats/exec-partial-receipt.md): case entries a lease holder finished, written while it still executes the
 * chunk, so that a worker taking the chunk over after a kill carries them forward instead of executing them again
 * (docs/execution.md, "Resume from partial receipts"). Immutable; {@link PartialReceiptParser} writes and reads it.
 *
 * @param runId                the run
 * @param chunkIndex           the chunk
 * @param chunkId              the plan's chunk id
 * @param shard                the chunk's shard
 * @param leaseGeneration      the lease generation of the holder that wrote it (and executed its entries)
 * @param worker               that holder's id
 * @param membership           the chunk's membership digest
 * @param settlementGeneration the run's settlement generation the holder executed for (1 for a chunk's first
 *                             execution, the rerun's generation for a chunk queued by {@code rerun-errors})
 * @param epochs               epochs per case in the run (each entry lists that many, none when 1)
 * @param sequence             the link's position in the chain, 1 for the first
 * @param previous             the link before it (key, length, SHA-256); empty exactly for sequence 1
 * @param writtenAt            when the holder wrote it
 * @param cases                the case entries it adds, in the receipt's case format, ascending ordinals
 */
public record PartialReceipt(
        UUID runId,
        long chunkIndex,
        UUID chunkId,
        int shard,
        long leaseGeneration,
        UUID worker,
        Sha256 membership,
        int settlementGeneration,
        int epochs,
        int sequence,
        Optional<ObjectRef> previous,
        Instant writtenAt,
        List<Receipt.CaseResult> cases) {
    public PartialReceipt {
        Objects.requireNonNull(previous, "previous");
        cases = List.copyOf(cases);
        if (sequence < 1 || (sequence == 1) != previous.isEmpty()) {
            throw new IllegalArgumentException(
                    "a partial receipt's sequence starts at 1, and exactly the first has no previous link");
        }
        if (cases.isEmpty()) {
            throw new IllegalArgumentException("a partial receipt adds at least one case entry");
        }
        for (int i = 1; i < cases.size(); i++) {
            if (cases.get(i).ordinal() <= cases.get(i - 1).ordinal()) {
                throw new IllegalArgumentException("a partial receipt's entries are in ascending ordinal order");
            }
        }
    }

    /** The object key of link {@code sequence} of a chunk's chain written under {@code leaseGeneration}. */
    public static ObjectKey key(UUID runId, long chunkIndex, long leaseGeneration, int sequence) {
        return ObjectKey.of("runs/" + runId + "/receipts/partial/" + ObjectKey.zeroPadded(chunkIndex, 10) + "-g"
                + leaseGeneration + "-p" + sequence + ".json");
    }
}
