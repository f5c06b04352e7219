package dev.vigilo.plan;

import dev.vigilo.storage.Sha256;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.UUID;

/**
 * The chunk fold and chunk ids (docs/formats/plan-layout.md, "Folds"). The case fold (chunk membership, shard
 * projection) is the dataset's {@link dev.vigilo.dataset.CaseFold}. One instance per fold; not thread-safe.
 * {@link #finish()} may be called once.
 */
final class Fold {
    private final MessageDigest digest = Sha256.newDigest();
    private final ByteBuffer buf = ByteBuffer.allocate(64);

    /** Adds one chunk: chunk index u64 || chunk id (16 bytes) || case count u32 || membership SHA-256. */
    void addChunk(long chunkIndex, UUID chunkId, int caseCount, Sha256 membership) {
        buf.clear();
        buf.putLong(chunkIndex)
                .putLong(chunkId.getMostSignificantBits())
                .putLong(chunkId.getLeastSignificantBits())
                .putInt(caseCount);
        digest.update(buf.array(), 0, buf.position());
        digest.update(membership.toBytes());
    }

    Sha256 finish() {
        return Sha256.ofDigest(digest.digest());
    }

    /** SHA-256 of the empty fold, the settlement/projection hash of a shard with no chunks. */
    static Sha256 empty() {
        return new Fold().finish();
    }

    /**
     * The chunk id: the first 16 bytes of SHA-256("vigilo.plan.chunk-id" || 0 || run id (16 bytes) || chunk index
     * u64) with RFC 9562 version 8 and variant 10. Deterministic, so a resumed preparation reproduces it.
     */
    static UUID chunkId(UUID runId, long chunkIndex) {
        MessageDigest d = Sha256.newDigest();
        d.update("vigilo.plan.chunk-id".getBytes(StandardCharsets.US_ASCII));
        d.update((byte) 0);
        ByteBuffer b = ByteBuffer.allocate(24);
        b.putLong(runId.getMostSignificantBits())
                .putLong(runId.getLeastSignificantBits())
                .putLong(chunkIndex);
        d.update(b.array());
        ByteBuffer h = ByteBuffer.wrap(d.digest());
        long msb = h.getLong();
        long lsb = h.getLong();
        msb = (msb & ~0xF000L) | 0x8000L;
        lsb = (lsb & 0x3FFFFFFFFFFFFFFFL) | 0x8000000000000000L;
        return new UUID(msb, lsb);
    }
}
