package dev.vigilo.datagen;

import java.math.BigDecimal;
import java.util.Objects;

/**
 * What a {@code kind: dedup} step compares: the text of one field, exactly (normalised text equal) or by MinHash (the
 * estimated Jaccard similarity of word 5-grams at or above {@code threshold}). The first item in item order wins;
 * a later duplicate ends as filtered with the id it duplicates (docs/datagen.md, "Dedup").
 *
 * @param field the item field whose text is compared (a string as is; another value as canonical JSON; missing or
 *     null as the empty text)
 * @param method how texts are compared
 * @param threshold minhash: the similarity in (0, 1] at or above which an item is a duplicate; null for exact
 */
public record DedupSpec(String field, Method method, BigDecimal threshold) {
    /** The default minhash threshold. */
    public static final BigDecimal DEFAULT_THRESHOLD = new BigDecimal("0.85");

    /** How a dedup step compares texts (the YAML {@code method}, lower case). */
    public enum Method {
        /** Normalised texts (Unicode NFKC, case folded, whitespace collapsed) are equal. */
        EXACT,
        /** The MinHash estimate of the Jaccard similarity of word 5-gram sets is at or above the threshold. */
        MINHASH
    }

    public DedupSpec {
        Objects.requireNonNull(field, "field");
        Objects.requireNonNull(method, "method");
        if ((method == Method.MINHASH) != (threshold != null)) {
            throw new IllegalArgumentException("a threshold is given for minhash only");
        }
    }
}
