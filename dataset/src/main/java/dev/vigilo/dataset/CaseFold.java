package dev.vigilo.dataset;

import dev.vigilo.storage.Sha256;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Objects;
import java.util.UUID;

/**
 * The ordered case fold: one SHA-256 over cases in ordinal order, each contributing
 * {@code ordinal (8 bytes, big-endian) || id length in bytes (4 bytes, big-endian) || id (UTF-8) || case SHA-256
 * (32 bytes)}. Two sequences have equal folds exactly when they hold the same case ids with the same contents at the
 * same ordinals. A dataset's membership UUID derives from the fold over all its cases (docs/formats/dataset.md); a
 * plan's chunk membership digest and shard projection are the fold over their cases
 * (docs/formats/plan-layout.md, "Folds").
 *
 * <p>Not thread-safe. {@link #finish()} completes the fold; the instance cannot be used afterwards.
 */
public final class CaseFold {
    private final MessageDigest digest = Sha256.newDigest();
    private final GrowableBytes entry = new GrowableBytes(128);
    private long cases;
    private boolean finished;

    /** Adds the next case. */
    public void add(long ordinal, String id, Sha256 caseSha256) {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(caseSha256, "caseSha256");
        byte[] idBytes = id.getBytes(StandardCharsets.UTF_8);
        entry.reset();
        encode(entry, ordinal, idBytes, 0, idBytes.length, caseSha256.toBytes(), 0);
        addEncoded(entry.array(), 0, entry.size(), 1);
    }

    /**
     * Appends one case's contribution to the fold to {@code out}, so that cases can be encoded apart (on other
     * threads) and folded in order with {@link #addEncoded}.
     *
     * @param id     the id's UTF-8 bytes at {@code [idOffset, idOffset + idLength)}
     * @param sha256 the case's 32-byte SHA-256 at {@code shaOffset}
     */
    static void encode(
            GrowableBytes out, long ordinal, byte[] id, int idOffset, int idLength, byte[] sha256, int shaOffset) {
        out.putLong(ordinal);
        out.putInt(idLength);
        out.put(id, idOffset, idLength);
        out.put(sha256, shaOffset, Sha256.LENGTH);
    }

    /** Adds {@code count} cases that {@link #encode} wrote to {@code entries[offset, offset + length)}, in order. */
    void addEncoded(byte[] entries, int offset, int length, long count) {
        if (finished) {
            throw new IllegalStateException("the fold is finished");
        }
        digest.update(entries, offset, length);
        cases += count;
    }

    /**
     * The contributions of consecutive cases, encoded once (possibly on another thread) and then added to one or more
     * folds in order with {@link #addAll}: folding a batch is one digest update instead of one per case. Not
     * thread-safe; do not change a batch while a fold reads it.
     */
    public static final class Batch {
        private final GrowableBytes entries = new GrowableBytes(128 * 16);
        private int count;

        /** Appends the next case. */
        public void add(long ordinal, String id, Sha256 caseSha256) {
            Objects.requireNonNull(id, "id");
            byte[] idBytes = id.getBytes(StandardCharsets.UTF_8);
            encode(entries, ordinal, idBytes, 0, idBytes.length, caseSha256.toBytes(), 0);
            count++;
        }

        /** How many cases the batch holds. */
        public int count() {
            return count;
        }
    }

    /** Adds every case of {@code batch}, in its order, as {@link #add} would one by one. */
    public void addAll(Batch batch) {
        Objects.requireNonNull(batch, "batch");
        addEncoded(batch.entries.array(), 0, batch.entries.size(), batch.count);
    }

    /** How many cases were added. */
    public long cases() {
        return cases;
    }

    /** Completes the fold and returns its digest; called at most once. */
    public Sha256 finish() {
        if (finished) {
            throw new IllegalStateException("the fold is finished");
        }
        finished = true;
        return Sha256.ofDigest(digest.digest());
    }

    /** The membership UUID of a fold: its first 16 bytes with the RFC 9562 version-8 and variant bits set. */
    static UUID membershipUuid(Sha256 fold) {
        ByteBuffer b = ByteBuffer.wrap(fold.toBytes());
        long msb = b.getLong();
        long lsb = b.getLong();
        msb = (msb & ~0xF000L) | 0x8000L; // version 8 (custom, RFC 9562)
        lsb = (lsb & 0x3FFFFFFFFFFFFFFFL) | 0x8000000000000000L; // IETF variant
        return new UUID(msb, lsb);
    }
}
