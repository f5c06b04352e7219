package dev.vigilo.dataset;

import java.nio.file.Path;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;

/**
 * What to upload.
 *
 * @param file     a JSON lines file, one case per line ({@code .jsonl}, or compressed: {@code .jsonl.gz}, {@code
 *                 .jsonl.zst}), a CSV file ({@code .csv}) with a header row, or a Parquet file ({@code .parquet}) or
 *                 directory of Parquet shards
 * @param name     a label; defaults to the file name without {@code .jsonl}
 * @param uploadId a caller-chosen upload id for idempotent retries: uploading the same bytes under the same id
 *                 again returns the existing entry; defaults to a fresh random id
 * @param map      how a CSV file's columns, or a JSON lines file's records, become cases (docs/formats/dataset.md);
 *                 a CSV file without one is read by its header's column names
 * @param origin   the datagen experiment the file was exported from, recorded with the entry
 */
public record UploadRequest(
        Path file,
        Optional<String> name,
        Optional<UUID> uploadId,
        Optional<CaseMap> map,
        Optional<DatasetOrigin> origin) {
    public UploadRequest {
        Objects.requireNonNull(file, "file");
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(uploadId, "uploadId");
        Objects.requireNonNull(map, "map");
        Objects.requireNonNull(origin, "origin");
    }

    /** A JSON lines file of cases, or a CSV file read by its header. */
    public UploadRequest(Path file, Optional<String> name, Optional<UUID> uploadId) {
        this(file, name, uploadId, Optional.empty(), Optional.empty());
    }

    /** A file read by {@code map} (or, without one, as {@link #UploadRequest(Path, Optional, Optional)}). */
    public UploadRequest(Path file, Optional<String> name, Optional<UUID> uploadId, Optional<CaseMap> map) {
        this(file, name, uploadId, map, Optional.empty());
    }

    public static UploadRequest of(Path file) {
        return new UploadRequest(file, Optional.empty(), Optional.empty());
    }

    String effectiveName() {
        return name.orElseGet(() -> {
            String fileName =
                    file.getFileName() == null ? "dataset" : file.getFileName().toString();
            for (String suffix : List.of(".jsonl.gz", ".jsonl.zst", ".jsonl", ".csv", ".parquet")) {
                if (fileName.endsWith(suffix)) {
                    return fileName.substring(0, fileName.length() - suffix.length());
                }
            }
            return fileName;
        });
    }
}
