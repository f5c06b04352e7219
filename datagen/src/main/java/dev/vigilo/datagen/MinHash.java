package dev.vigilo.datagen;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HexFormat;

/**
 * MinHash signatures of word 5-gram sets and their LSH bands, for the minhash method of dedup steps. A small
 * implementation on purpose (no maintained Java library offers a seedable, documented MinHash; the algorithm is a
 * few lines): fixed constants, so every process and every version computes the same signature for the same text.
 *
 * <ul>
 *   <li>Shingles: the words of the normalised text ({@link DedupText#normalise}, split at spaces), every 5
 *       consecutive words joined by one space; a text of fewer than 5 words is one shingle (all its words; the empty
 *       text: the empty shingle).
 *   <li>Base hash of a shingle: the first 8 bytes (big-endian) of SHA-256 of its UTF-8 bytes.
 *   <li>Signature: {@value #HASHES} values; value {@code i} is the minimum over the shingles of {@code
 *       splitmix64(base + (i + 1) * 0x9E3779B97F4A7C15)} compared as unsigned.
 *   <li>Similarity estimate: matching positions / {@value #HASHES}; "at or above the threshold" is the exact integer
 *       test {@code matches >= ceil(threshold * 128)}, so no floating point decides.
 *   <li>LSH: the signature is cut into bands of {@code r} rows, {@code r} the largest of 8, 4, 2, 1 for which a pair
 *       exactly at the threshold shares no band with probability at most 10^-6 ({@code (1 - t^r)^(128 / r)}); only
 *       items sharing a band are compared.
 * </ul>
 */
final class MinHash {
    /** Signature length. */
    static final int HASHES = 128;

    private static final int SHINGLE_WORDS = 5;
    private static final long GOLDEN = 0x9E3779B97F4A7C15L;

    private MinHash() {}

    /** The signature of {@code text} (normalised here). */
    static long[] signature(String text) {
        String norm = DedupText.normalise(text);
        String[] words = norm.isEmpty() ? new String[0] : norm.split(" ");
        long[] sig = new long[HASHES];
        Arrays.fill(sig, -1L); // the unsigned maximum
        int shingles = Math.max(1, words.length - SHINGLE_WORDS + 1);
        for (int s = 0; s < shingles; s++) {
            String shingle =
                    String.join(" ", Arrays.asList(words).subList(s, Math.min(words.length, s + SHINGLE_WORDS)));
            long base = ByteBuffer.wrap(DedupText.sha256(shingle.getBytes(StandardCharsets.UTF_8)))
                    .getLong();
            for (int i = 0; i < HASHES; i++) {
                long h = splitmix64(base + (i + 1) * GOLDEN);
                if (Long.compareUnsigned(h, sig[i]) < 0) {
                    sig[i] = h;
                }
            }
        }
        return sig;
    }

    /** splitmix64's finalizer (Steele, Lea, Flood 2014). */
    private static long splitmix64(long z) {
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    /** Positions at which two signatures agree. */
    static int matches(long[] a, long[] b) {
        int m = 0;
        for (int i = 0; i < HASHES; i++) {
            if (a[i] == b[i]) {
                m++;
            }
        }
        return m;
    }

    /** The fewest matching positions that reach {@code threshold}: {@code ceil(threshold * 128)}. */
    static int minMatches(BigDecimal threshold) {
        return threshold
                .multiply(BigDecimal.valueOf(HASHES))
                .setScale(0, RoundingMode.CEILING)
                .intValueExact();
    }

    /** The rows per LSH band for {@code threshold} (see the class comment). */
    static int rowsPerBand(BigDecimal threshold) {
        double t = threshold.doubleValue();
        for (int r : new int[] {8, 4, 2}) {
            // Only the banding (which pairs are compared) depends on this double computation, never a decision's
            // arithmetic; the threshold is a parsed constant, so every process picks the same r.
            if (Math.pow(1 - Math.pow(t, r), (double) HASHES / r) <= 1e-6) {
                return r;
            }
        }
        return 1;
    }

    /** Band {@code b}'s key: its index and rows, hashed to one long. */
    static long bandKey(long[] sig, int b, int rows) {
        long h = b * GOLDEN;
        for (int i = b * rows; i < (b + 1) * rows; i++) {
            h = splitmix64(h ^ sig[i]);
        }
        return h;
    }

    /** The signature as text ({@value #HASHES} x 16 hex digits), as a dedup tag keeps it. */
    static String toHex(long[] sig) {
        ByteBuffer b = ByteBuffer.allocate(HASHES * Long.BYTES);
        for (long v : sig) {
            b.putLong(v);
        }
        return HexFormat.of().formatHex(b.array());
    }

    /** Reads {@link #toHex}'s text; null when it is not a signature. */
    static long[] fromHex(String hex) {
        if (hex == null || hex.length() != HASHES * 16) {
            return null;
        }
        try {
            ByteBuffer b = ByteBuffer.wrap(HexFormat.of().parseHex(hex));
            long[] sig = new long[HASHES];
            for (int i = 0; i < HASHES; i++) {
                sig[i] = b.getLong();
            }
            return sig;
        } catch (IllegalArgumentException e) {
            return null;
        }
    }
}
