package dev.vigilo.dataset;

import dev.vigilo.storage.ObjectRef;
import java.util.Objects;

/**
 * One reference inside an index document: a child object (a case file at level 0, an index document of level
 * L-1 at level L) and the ordinal range it covers.
 *
 * @param ref          the child's key, length and SHA-256
 * @param firstOrdinal the first case ordinal under the child
 * @param caseCount    how many cases are under the child ({@code >= 1})
 */
record IndexEntry(ObjectRef ref, long firstOrdinal, long caseCount) {
    IndexEntry {
        Objects.requireNonNull(ref, "ref");
        if (firstOrdinal < 0 || caseCount < 1) {
            throw new IllegalArgumentException("bad index entry range " + firstOrdinal + "+" + caseCount);
        }
    }
}
