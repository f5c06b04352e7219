package dev.vigilo.dataset;

import java.nio.file.Path;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;

/**
 * What to upload.
 *
 * @param file     a JSONL file, one case per line
 * @param name     a label; defaults to the file name without {@code .jsonl}
 * @param uploadId a caller-chosen upload id for idempotent retries: uploading the same bytes under the same id
 *                 again returns the existing entry; defaults to a fresh random id
 */
public record UploadRequest(Path file, Optional<String> name, Optional<UUID> uploadId) {
    public UploadRequest {
        Objects.requireNonNull(file, "file");
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(uploadId, "uploadId");
    }

    public static UploadRequest of(Path file) {
        return new UploadRequest(file, Optional.empty(), Optional.empty());
    }

    String effectiveName() {
        return name.orElseGet(() -> {
            String fileName =
                    file.getFileName() == null ? "dataset" : file.getFileName().toString();
            return fileName.endsWith(".jsonl") ? fileName.substring(0, fileName.length() - 6) : fileName;
        });
    }
}
