package dev.vigilo.dataset;

import dev.vigilo.common.errors.ConflictException;
import dev.vigilo.common.errors.NotFoundException;
import dev.vigilo.storage.ObjectStore;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import java.util.function.Supplier;
import org.jdbi.v3.core.Jdbi;

/**
 * The finalized dataset catalog: uploads JSONL files into an object store and records each finished upload as one
 * immutable {@link DatasetEntry} in the control database.
 *
 * <p>Guarantees: an entry exists only after every file it references was durably created and verified; a failed
 * or killed upload leaves no entry (only unreferenced content-addressed files, reused by a re-run); invalid input
 * is rejected with {@link InvalidDatasetException} before anything is stored; entries are never updated.
 * Thread-safe.
 */
public final class DatasetCatalog {
    private final CatalogRows rows;

    public DatasetCatalog(Jdbi jdbi) {
        Objects.requireNonNull(jdbi, "jdbi");
        this.rows = new CatalogRows(() -> jdbi);
    }

    /**
     * A catalog over a control database that may still be opening: {@code database} is called on each use of the
     * database and may block until it is open (its failure is the failing call's). An upload without a caller-chosen
     * id uses the database only to record its entry, after its cases were validated and stored, so the two can
     * overlap ({@code vigilo eval} joins the embedded server while it reads the file).
     */
    public DatasetCatalog(Supplier<Jdbi> database) {
        this.rows = new CatalogRows(Objects.requireNonNull(database, "database"));
    }

    /**
     * Uploads {@code request.file()} into {@code store} and finalizes it.
     *
     * @throws InvalidDatasetException when the file is missing or not a valid dataset (nothing stored)
     * @throws ConflictException       when a caller-chosen upload id already names different content
     * @throws dev.vigilo.common.errors.UnavailableException when the store fails; no entry is created and a re-run is safe
     */
    public DatasetEntry upload(UploadRequest request, ObjectStore store, UploadProgress progress) {
        Objects.requireNonNull(request, "request");
        return new DatasetUploader(store, rows, progress, UploadLayout.DEFAULT).upload(request);
    }

    public Optional<DatasetEntry> find(UUID uploadId) {
        return rows.find(Objects.requireNonNull(uploadId, "uploadId"));
    }

    /** @throws NotFoundException when no entry has that id */
    public DatasetEntry get(UUID uploadId) {
        return find(uploadId)
                .orElseThrow(() -> new NotFoundException(
                        "no finalized dataset has upload id " + uploadId + "; see `vigilo dataset list`"));
    }

    /** Where the entry came from, when Vigilo made it from a datagen experiment; empty for an uploaded file. */
    public Optional<DatasetOrigin> origin(UUID uploadId) {
        return rows.origin(Objects.requireNonNull(uploadId, "uploadId"));
    }

    /** The entries made from one datagen experiment, newest first. */
    public List<DatasetEntry> madeFrom(String pipeline, String experiment) {
        return rows.madeFrom(
                Objects.requireNonNull(pipeline, "pipeline"), Objects.requireNonNull(experiment, "experiment"));
    }

    /** Every entry, newest first. */
    public List<DatasetEntry> list() {
        return rows.list();
    }

    /**
     * A page of {@link #list()}: the at most {@code limit} entries that follow {@code after} (an entry of the previous
     * page, normally its last), or the first ones when {@code after} is empty. Bounded by {@code limit} whatever the
     * catalog's size.
     *
     * @throws IllegalArgumentException when {@code limit} is not in 1..1000
     */
    public List<DatasetEntry> page(Optional<DatasetEntry> after, int limit) {
        Objects.requireNonNull(after, "after");
        if (limit < 1 || limit > 1000) {
            throw new IllegalArgumentException("limit must be in 1..1000, got " + limit);
        }
        return rows.page(after, limit);
    }
}
