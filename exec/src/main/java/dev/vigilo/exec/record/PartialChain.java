package dev.vigilo.exec.record;

import dev.vigilo.common.errors.DamagedException;
import dev.vigilo.storage.ObjectReader;
import dev.vigilo.storage.ObjectRef;
import dev.vigilo.storage.Sha256;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import java.util.UUID;

/**
 * Reads and verifies a chunk's partial receipt chain (docs/execution.md, "Resume from partial receipts") from its
 * newest link back to its first, each link read through the reference its successor (or the chunk row, or a version
 * 7 receipt's {@code resumed_from}) names, so an altered or lost link is damage. Every link must be of the expected
 * chunk (run, chunk id, membership digest, settlement generation, epochs), written under a lease generation before
 * the reader's and not after its successor's, numbered one less than its successor, the first without a previous
 * link; every entry must be a case of the chunk (ordinal, id and case SHA-256 of the chunk file), and no case may be
 * listed twice. Used by the worker that resumes a chunk and by {@code vigilo verify}. Memory: the chain's entries
 * (at most one per case of the chunk).
 */
public final class PartialChain {
    private PartialChain() {}

    /** A case of the chunk as its chunk file lists it. */
    public record Case(long ordinal, String id, Sha256 sha256) {}

    /**
     * What every link must match.
     *
     * @param before               the reader's lease generation: every link was written under an earlier one
     * @param settlementGeneration the settlement generation the reader executes for (1 for a first execution)
     * @param cases                the chunk's cases in ordinal order
     */
    public record Expected(
            UUID runId,
            long chunkIndex,
            UUID chunkId,
            Sha256 membership,
            int settlementGeneration,
            int epochs,
            long before,
            List<Case> cases) {
        public Expected {
            cases = List.copyOf(cases);
        }
    }

    /**
     * A case entry of the chain.
     *
     * @param result     the entry
     * @param generation the lease generation of the link that lists it (whose holder executed it)
     * @param bytes      the entry's bytes as the link holds them (compact JSON)
     */
    public record Entry(Receipt.CaseResult result, long generation, byte[] bytes) {
        public Entry {
            Objects.requireNonNull(result, "result");
            Objects.requireNonNull(bytes, "bytes");
        }
    }

    /**
     * A verified chain.
     *
     * @param head     its newest link
     * @param sequence the newest link's sequence number (the chain's length)
     * @param entries  its case entries by ordinal, ascending
     */
    public record Chain(ObjectRef head, int sequence, Map<Long, Entry> entries) {
        public Chain {
            Objects.requireNonNull(head, "head");
            entries = java.util.Collections.unmodifiableMap(new TreeMap<>(entries));
        }
    }

    /**
     * The verified chain ending in {@code head}.
     *
     * @throws DamagedException when a link is missing, altered, of another chunk or out of order, or an entry is not
     *     a case of the chunk or is listed twice
     */
    public static Chain read(ObjectReader store, ObjectRef head, Expected expected) {
        Map<Long, Case> byOrdinal = new HashMap<>();
        expected.cases().forEach(c -> byOrdinal.put(c.ordinal(), c));
        Map<Long, Entry> out = new TreeMap<>();
        Optional<ObjectRef> next = Optional.of(head);
        long newerGeneration = expected.before() - 1;
        int newerSequence = -1;
        int headSequence = -1;
        while (next.isPresent()) {
            ObjectRef ref = next.get();
            String key = ref.key().value();
            PartialReceiptParser.Read read =
                    PartialReceiptParser.fromJson(ChunkRows.read(store, ref, "partial receipt " + key), key);
            PartialReceipt p = read.receipt();
            if (!p.runId().equals(expected.runId())
                    || p.chunkIndex() != expected.chunkIndex()
                    || !p.chunkId().equals(expected.chunkId())
                    || !p.membership().equals(expected.membership())
                    || p.settlementGeneration() != expected.settlementGeneration()
                    || p.epochs() != expected.epochs()) {
                throw new DamagedException("partial receipt " + key + " is not a partial receipt of chunk "
                        + expected.chunkIndex() + " of run " + expected.runId() + " for settlement generation "
                        + expected.settlementGeneration());
            }
            if (p.leaseGeneration() > newerGeneration) {
                throw new DamagedException("partial receipt " + key + " was written under lease generation "
                        + p.leaseGeneration() + ", after the generation " + newerGeneration + " that names it");
            }
            if (newerSequence != -1 && p.sequence() != newerSequence - 1) {
                throw new DamagedException("partial receipt " + key + " is link " + p.sequence()
                        + " of its chain, where link " + (newerSequence - 1) + " was named");
            }
            for (int i = 0; i < p.cases().size(); i++) {
                Receipt.CaseResult c = p.cases().get(i);
                Case listed = byOrdinal.get(c.ordinal());
                if (listed == null
                        || !listed.id().equals(c.id())
                        || !listed.sha256().equals(c.caseSha256())) {
                    throw new DamagedException("partial receipt " + key + " records case \"" + c.id() + "\" at ordinal "
                            + c.ordinal() + ", which is not a case of chunk " + expected.chunkIndex());
                }
                if (out.putIfAbsent(
                                c.ordinal(),
                                new Entry(
                                        c,
                                        p.leaseGeneration(),
                                        read.entryBytes().get(i)))
                        != null) {
                    throw new DamagedException("partial receipt " + key + " records case \"" + c.id()
                            + "\", which a later link of its chain records too");
                }
            }
            if (headSequence == -1) {
                headSequence = p.sequence();
            }
            newerGeneration = p.leaseGeneration();
            newerSequence = p.sequence();
            next = p.previous();
        }
        return new Chain(head, headSequence, out);
    }
}
