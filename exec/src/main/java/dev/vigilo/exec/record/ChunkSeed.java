package dev.vigilo.exec.record;

import dev.vigilo.plan.ChunkFile;
import dev.vigilo.plan.PlanShape;
import dev.vigilo.storage.ObjectRef;
import dev.vigilo.storage.Sha256;
import java.util.UUID;

/**
 * The immutable part of one chunk's scheduling row, as admission seeds it and everyone after compares it: identity,
 * range, membership digest and the chunk file's reference. About 300 bytes of metadata; no case data.
 *
 * @param chunkIndex   position in the plan
 * @param shard        {@code chunkIndex mod 128}
 * @param shardSeq     position within the shard ({@code chunkIndex / 128})
 * @param chunkId      the plan's deterministic chunk id
 * @param firstOrdinal first case ordinal
 * @param caseCount    cases, 1..100
 * @param membership   the chunk's case fold
 * @param file         the chunk file's reference
 */
public record ChunkSeed(
        long chunkIndex,
        int shard,
        long shardSeq,
        UUID chunkId,
        long firstOrdinal,
        int caseCount,
        Sha256 membership,
        ObjectRef file) {

    public static ChunkSeed of(ChunkFile c, ObjectRef file) {
        return new ChunkSeed(
                c.chunkIndex(),
                c.shard(),
                c.chunkIndex() / PlanShape.SHARDS,
                c.chunkId(),
                c.firstOrdinal(),
                c.cases().size(),
                c.membership(),
                file);
    }

    /** Bytes this row costs in an insert statement's budget (text columns plus fixed-width ones). */
    int metadataBytes() {
        return file.key().value().length() + 64 + 64 + 36 + 8 * 5;
    }
}
