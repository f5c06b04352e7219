package dev.vigilo.dataset;

import dev.vigilo.storage.ObjectRef;
import java.util.Objects;

/**
 * One case file of a finalized dataset and the ordinal range it holds, as its index records them. A reader that
 * plans its memory sums {@link ObjectRef#length()} over the files of a range before reading them.
 *
 * @param ref          the case file's key, exact length and SHA-256
 * @param firstOrdinal the ordinal of the file's first case
 * @param caseCount    how many cases the file holds, at least 1
 */
public record CaseFileSpan(ObjectRef ref, long firstOrdinal, long caseCount) {
    public CaseFileSpan {
        Objects.requireNonNull(ref, "ref");
        if (firstOrdinal < 0 || caseCount < 1) {
            throw new IllegalArgumentException("bad case file range " + firstOrdinal + "+" + caseCount);
        }
    }

    /** The ordinal after the file's last case. */
    public long endOrdinal() {
        return firstOrdinal + caseCount;
    }
}
