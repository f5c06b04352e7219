package dev.vigilo.datagen;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.math.BigDecimal;

/**
 * A dedup step's decision for one item, and its record in the step's STEP_COMPLETED query tags (version 1):
 *
 * <pre>
 * {"dedup": {"version": 1, "method": "exact"|"minhash", "duplicate_of": ID, "similarity": "0.9453125"}}   a duplicate
 * {"dedup": {"version": 1, "method": "exact"|"minhash", "key": K}}                                        kept
 * </pre>
 *
 * {@code key} is what later items are compared with (exact: hex SHA-256 of the normalised text; minhash: the
 * signature, {@link MinHash#toHex}); {@code similarity} the matching fraction of the signatures ({@code "1"} for
 * exact). Unlike other tags this one is read back: a resumed or other process registers a kept item's key from it.
 *
 * @param duplicateOf the earlier item this one duplicates; null when kept
 * @param similarity the similarity to {@code duplicateOf} as an exact decimal; null when kept
 * @param exactKey exact, kept: the key; else null
 * @param signature minhash, kept: the signature; else null
 */
record DedupDecision(
        DedupSpec.Method method, String duplicateOf, String similarity, String exactKey, long[] signature) {
    /** The tag's format version. */
    static final int VERSION = 1;

    static DedupDecision kept(String exactKey) {
        return new DedupDecision(DedupSpec.Method.EXACT, null, null, exactKey, null);
    }

    static DedupDecision kept(long[] signature) {
        return new DedupDecision(DedupSpec.Method.MINHASH, null, null, null, signature);
    }

    static DedupDecision duplicate(DedupSpec.Method method, String of, int matches) {
        String similarity = method == DedupSpec.Method.EXACT
                ? "1"
                : new BigDecimal(matches)
                        .divide(BigDecimal.valueOf(MinHash.HASHES))
                        .stripTrailingZeros()
                        .toPlainString();
        return new DedupDecision(method, of, similarity, null, null);
    }

    boolean duplicate() {
        return duplicateOf != null;
    }

    /** The STEP_COMPLETED tags. */
    ObjectNode tags() {
        ObjectNode root = Json.MAPPER.createObjectNode();
        ObjectNode d = root.putObject("dedup")
                .put("version", VERSION)
                .put("method", method.name().toLowerCase(java.util.Locale.ROOT));
        if (duplicate()) {
            d.put("duplicate_of", duplicateOf).put("similarity", similarity);
        } else {
            d.put("key", exactKey != null ? exactKey : MinHash.toHex(signature));
        }
        return root;
    }

    /**
     * The decision a STEP_COMPLETED's tags record; null when they hold none this version reads (absent, unreadable, a
     * newer version, or a key that does not fit the method).
     */
    static DedupDecision fromTags(String tagsJson) {
        if (tagsJson == null) {
            return null;
        }
        JsonNode d;
        try {
            d = Json.parse(tagsJson).path("dedup");
        } catch (JsonProcessingException e) {
            return null;
        }
        if (!d.isObject() || d.path("version").asInt(0) != VERSION) {
            return null;
        }
        DedupSpec.Method method = "minhash".equals(d.path("method").asText())
                ? DedupSpec.Method.MINHASH
                : "exact".equals(d.path("method").asText()) ? DedupSpec.Method.EXACT : null;
        if (method == null) {
            return null;
        }
        if (d.hasNonNull("duplicate_of")) {
            return new DedupDecision(
                    method, d.get("duplicate_of").asText(), d.path("similarity").asText(null), null, null);
        }
        String key = d.path("key").asText(null);
        if (method == DedupSpec.Method.EXACT) {
            return key == null ? null : kept(key);
        }
        long[] sig = MinHash.fromHex(key);
        return sig == null ? null : kept(sig);
    }
}
