package dev.vigilo.dataset;

import dev.vigilo.storage.Sha256;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.UUID;

/**
 * The ordered case id/hash fold: one SHA-256 over every case in submitted order, each contributing
 * {@code ordinal (8 bytes, big-endian) || id length in bytes (4 bytes, big-endian) || id (UTF-8) || case SHA-256
 * (32 bytes)}. Two datasets have equal folds exactly when they hold the same case ids with the same contents in
 * the same order. The membership UUID is the fold's first 16 bytes with the RFC 9562 version-8 and variant bits
 * set. See docs/formats/dataset.md. Not thread-safe.
 */
final class MembershipFold {
    private final MessageDigest digest = Sha256.newDigest();
    private final ByteBuffer header = ByteBuffer.allocate(12);
    private long cases;

    void add(long ordinal, String id, Sha256 caseSha256) {
        byte[] idBytes = id.getBytes(StandardCharsets.UTF_8);
        header.clear();
        header.putLong(ordinal).putInt(idBytes.length);
        digest.update(header.array(), 0, 12);
        digest.update(idBytes);
        digest.update(caseSha256.toBytes());
        cases++;
    }

    long cases() {
        return cases;
    }

    /** Completes the fold; the instance must not be used afterwards. */
    Sha256 finish() {
        return Sha256.ofDigest(digest.digest());
    }

    static UUID membershipUuid(Sha256 fold) {
        ByteBuffer b = ByteBuffer.wrap(fold.toBytes());
        long msb = b.getLong();
        long lsb = b.getLong();
        msb = (msb & ~0xF000L) | 0x8000L; // version 8 (custom, RFC 9562)
        lsb = (lsb & 0x3FFFFFFFFFFFFFFFL) | 0x8000000000000000L; // IETF variant
        return new UUID(msb, lsb);
    }
}
