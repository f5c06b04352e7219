package dev.vigilo.dataset;

import dev.vigilo.storage.ObjectRef;
import dev.vigilo.storage.Sha256;
import dev.vigilo.storage.StoreBinding;
import java.time.Instant;
import java.util.Objects;
import java.util.UUID;

/**
 * A finalized dataset catalog entry: immutable once written. Every file it reaches through {@link #indexRoot()}
 * was stored and verified before the entry existed.
 *
 * @param uploadId       the dataset's identity
 * @param name           a human label (not unique)
 * @param sourceSha256   SHA-256 of the uploaded file's bytes, exactly as submitted
 * @param sourceBytes    size of the uploaded file
 * @param membershipUuid identity of the ordered case id/hash fold (see docs/formats/dataset.md)
 * @param caseCount      number of cases, at least 1
 * @param indexRoot      the root index document
 * @param indexLevels    number of index levels (root level + 1), 1..8
 * @param storage        the physical store holding every file of the dataset
 * @param createdAt      when the entry was finalized
 */
public record DatasetEntry(
        UUID uploadId,
        String name,
        Sha256 sourceSha256,
        long sourceBytes,
        UUID membershipUuid,
        long caseCount,
        ObjectRef indexRoot,
        int indexLevels,
        StoreBinding storage,
        Instant createdAt) {
    public DatasetEntry {
        Objects.requireNonNull(uploadId, "uploadId");
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(sourceSha256, "sourceSha256");
        Objects.requireNonNull(membershipUuid, "membershipUuid");
        Objects.requireNonNull(indexRoot, "indexRoot");
        Objects.requireNonNull(storage, "storage");
        Objects.requireNonNull(createdAt, "createdAt");
    }
}
