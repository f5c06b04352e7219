package dev.vigilo.dataset;

import dev.vigilo.storage.Sha256;
import java.util.Objects;

/**
 * One case as stored in a finalized dataset, already verified against its case file and index.
 *
 * @param ordinal   0-based position in submitted order
 * @param fields    the id, group and tags
 * @param sha256    SHA-256 of {@link #caseJson()}
 * @param caseJson  the submitted case line, byte for byte (UTF-8 JSON object); callers must not modify it
 */
public record StoredCase(long ordinal, CaseFields fields, Sha256 sha256, byte[] caseJson) {
    public StoredCase {
        Objects.requireNonNull(fields, "fields");
        Objects.requireNonNull(sha256, "sha256");
        Objects.requireNonNull(caseJson, "caseJson");
    }

    public String id() {
        return fields.id();
    }
}
