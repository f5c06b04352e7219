package dev.vigilo.dataset;

import dev.vigilo.common.crash.CrashPoints;
import dev.vigilo.common.errors.ConflictException;
import dev.vigilo.common.errors.UnavailableException;
import dev.vigilo.common.input.InputFiles;
import dev.vigilo.common.input.Names;
import dev.vigilo.storage.Deadline;
import dev.vigilo.storage.ObjectStore;
import dev.vigilo.storage.Sha256;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Uploads one JSONL file as a finalized dataset, streaming, in two passes over the file:
 * <ol>
 *   <li><b>validate</b> ({@link ValidationPass}): every line is checked (UTF-8, JSON, case shape, unique ids via a
 *       bounded-memory external sort) and the source SHA-256 computed. Bad input fails here, before anything is
 *       stored.</li>
 *   <li><b>store</b> ({@link StorePass}): cases go into content-addressed case files and the index is built
 *       bottom-up; the source hash is recomputed and must match pass 1 (the file must not change during the
 *       upload).</li>
 * </ol>
 * Both passes read the file in the same batches of whole lines ({@link SourceBatches}) and process batches on
 * worker threads while the calling thread reads ahead. Then the root is read back and verified, and the catalog row
 * is inserted: the one commit point. A crash before it leaves only unreferenced, content-addressed files, which a
 * re-run recreates idempotently.
 */
final class DatasetUploader {
    private static final Logger LOG = LoggerFactory.getLogger(DatasetUploader.class);
    private static final int ID_BUFFER_ENTRIES = 1 << 20;
    /** Case files being created at once: a local store spends most of a create waiting for fsyncs. */
    private static final int WRITES_IN_FLIGHT = 16;
    /** Bytes of case files being created at once (at least one file, however large). */
    private static final long WRITE_BYTES_IN_FLIGHT = 16L << 20;

    private final ObjectStore store;
    private final CatalogRows catalog;
    private final UploadProgress progress;
    private final UploadLayout layout;

    DatasetUploader(ObjectStore store, CatalogRows catalog, UploadProgress progress, UploadLayout layout) {
        this.layout = Objects.requireNonNull(layout, "layout");
        this.store = Objects.requireNonNull(store, "store");
        this.catalog = Objects.requireNonNull(catalog, "catalog");
        this.progress = Objects.requireNonNull(progress, "progress");
    }

    DatasetEntry upload(UploadRequest request) {
        try {
            return uploadSource(request);
        } catch (RecordProblem e) {
            throw e.problem();
        }
    }

    private DatasetEntry uploadSource(UploadRequest request) {
        Path file = request.file();
        String name = request.effectiveName();
        Names.label(name, request.name().isPresent() ? "--name" : file + ": the name taken from the file name");
        Optional<UUID> requestedId = request.uploadId();
        if (requestedId.isPresent()) {
            Optional<DatasetEntry> existing = catalog.find(requestedId.get());
            if (existing.isPresent()) {
                return sameUploadOrConflict(existing.get(), UploadSource.of(request), name);
            }
        }
        UploadSource source = UploadSource.of(request);
        long size = sizeOf(source);
        ValidationPass.Result validated = validate(source, size);
        Stored stored = store(source, size, validated);
        DatasetEntry entry = new DatasetEntry(
                requestedId.orElseGet(UUID::randomUUID),
                name,
                validated.sourceSha256(),
                size,
                CaseFold.membershipUuid(stored.fold),
                validated.cases(),
                stored.root.ref(),
                stored.root.levels(),
                store.binding(),
                Instant.now());
        CrashPoints.boundary("dataset.catalog-insert");
        boolean inserted = catalog.insert(entry, IndexDocument.VERSION, request.origin());
        CrashPoints.boundary("dataset.catalog-insert.done");
        if (!inserted) {
            // A concurrent upload with the same caller-chosen id committed first.
            DatasetEntry winner = catalog.find(entry.uploadId()).orElseThrow();
            return sameUploadOrConflict(winner, UploadSource.of(request), name);
        }
        LOG.info(
                "finalized dataset {} ({} cases, root {})",
                entry.uploadId(),
                entry.caseCount(),
                entry.indexRoot().key());
        return catalog.find(entry.uploadId()).orElseThrow();
    }

    private DatasetEntry sameUploadOrConflict(DatasetEntry existing, UploadSource from, String name) {
        Path file = from.file();
        Sha256 source = hashFile(from);
        if (existing.sourceSha256().equals(source) && existing.name().equals(name)) {
            return existing;
        }
        throw new ConflictException("upload id " + existing.uploadId() + " already names dataset \""
                + existing.name()
                + "\" with source hash " + existing.sourceSha256() + "; " + file + " differs (source hash " + source
                + ", name \"" + name + "\"). Choose another --upload-id or omit it.");
    }

    private record Stored(IndexBuilder.Root root, Sha256 fold) {}

    private ValidationPass.Result validate(UploadSource from, long size) {
        Path file = from.file();
        try (DuplicateIdDetector ids = new DuplicateIdDetector(ID_BUFFER_ENTRIES);
                SourceBatches source = batches(from)) {
            ValidationPass.Result result;
            try {
                result = new ValidationPass(file, from.sizedByFile() ? size : 0, progress, ids).run(source);
            } catch (InvalidDatasetException e) {
                throw from.relocate(e);
            }
            if (result.cases() == 0) {
                throw new InvalidDatasetException(
                        file, 0, 0, "the file holds no cases (it is empty or blank); put one JSON case per line");
            }
            Set<Long> repeated = ids.repeatedFingerprints();
            if (!repeated.isEmpty()) {
                Optional<InvalidDatasetException> duplicate = findDuplicate(from, repeated);
                if (duplicate.isPresent()) {
                    throw duplicate.get();
                }
            }
            return result;
        } catch (IOException e) {
            throw new UnavailableException("cannot read " + file + ": " + e.getMessage(), e);
        }
    }

    private Stored store(UploadSource from, long size, ValidationPass.Result validated) {
        Path file = from.file();
        try (ObjectWriter writer = new ObjectWriter(store, WRITES_IN_FLIGHT, WRITE_BYTES_IN_FLIGHT);
                SourceBatches source = batches(from)) {
            IndexBuilder index = new IndexBuilder(writer, layout.indexMaxEntries());
            Sha256 fold = new StorePass(
                            file,
                            from.sizedByFile() ? size : validated.bytes(),
                            progress,
                            layout,
                            validated,
                            writer,
                            index)
                    .run(source);
            IndexBuilder.Root root = index.finish();
            writer.awaitAll();
            // Read the root back through its reference: the store must return exactly the bytes we indexed.
            store.read(root.ref(), Deadline.after(ObjectWriter.TRANSFER_TIMEOUT));
            LOG.debug("stored {} objects, {} bytes", writer.objectsWritten(), writer.bytesWritten());
            return new Stored(root, fold);
        } catch (IOException e) {
            throw new UnavailableException("cannot read " + file + ": " + e.getMessage(), e);
        }
    }

    private static CaseFields parse(CaseLineParser parser, SourceLines lines, Path file) {
        try {
            return parser.parse(lines.lineBytes(), lines.lineLength());
        } catch (CaseLineParser.CaseSyntaxException e) {
            throw new InvalidDatasetException(file, lines.lineNumber(), e.column, e.getMessage());
        }
    }

    /** The error for a line longer than the largest case. */
    static InvalidDatasetException tooLong(Path file, long line) {
        return new InvalidDatasetException(
                file,
                line,
                0,
                "the case is longer than " + DatasetLimits.MAX_CASE_BYTES + " bytes, the largest case Vigilo stores");
    }

    private static boolean nextLine(SourceLines lines, Path file) throws IOException {
        try {
            return lines.next();
        } catch (SourceLines.LineTooLongException e) {
            throw tooLong(file, e.line);
        }
    }

    /**
     * Re-reads the file to turn repeated fingerprints into the first real duplicate: the line whose id already
     * occurred, and the line where it first did. Only ids with a repeated fingerprint are remembered.
     */
    private static Optional<InvalidDatasetException> findDuplicate(UploadSource from, Set<Long> repeated) {
        Path file = from.file();
        CaseLineParser parser = new CaseLineParser(DatasetLimits.MAX_CASE_BYTES);
        java.security.MessageDigest digest = Sha256.newDigest();
        Map<String, Long> firstLineOfId = new HashMap<>();
        try (SourceLines lines = new SourceLines(from.open(), DatasetLimits.MAX_CASE_BYTES)) {
            while (nextLine(lines, file)) {
                if (lines.lineIsBlank()) {
                    continue;
                }
                String id = parse(parser, lines, file).id();
                if (!repeated.contains(DuplicateIdDetector.fingerprint(digest, id))) {
                    continue;
                }
                Long first = firstLineOfId.putIfAbsent(id, lines.lineNumber());
                if (first != null && from.format() == UploadSource.Format.PARQUET) {
                    return Optional.of(from.relocate(new InvalidDatasetException(
                            file,
                            lines.lineNumber(),
                            0,
                            "duplicate case id \"" + id + "\": it repeats the id of " + from.where(first)
                                    + "; case ids must be unique within a dataset")));
                }
                if (first != null) {
                    long line = from.physicalLine(lines.lineNumber());
                    return Optional.of(new InvalidDatasetException(
                            file,
                            line,
                            0,
                            "duplicate case id \""
                                    + id + "\": line " + line + " repeats the id of line " + from.physicalLine(first)
                                    + "; case ids must be unique within a dataset"));
                }
            }
        } catch (IOException e) {
            throw new UnavailableException("cannot re-read " + file + ": " + e.getMessage(), e);
        }
        // Fingerprints collided for different ids: no duplicate after all.
        return Optional.empty();
    }

    private static SourceBatches batches(UploadSource from) throws IOException {
        return new SourceBatches(from.open(), ValidationPass.BATCH_BYTES, DatasetLimits.MAX_CASE_BYTES);
    }

    private static long sizeOf(UploadSource from) {
        Path file = from.file();
        if (from.format() != UploadSource.Format.PARQUET || !Files.isDirectory(file)) {
            return sizeOf(file);
        }
        long size = 0;
        for (Path shard : ParquetRecords.shards(file)) {
            size += sizeOf(shard);
        }
        return size;
    }

    private static long sizeOf(Path file) {
        // The input-file rule, before anything opens the file: a pipe or a device can be read only once (an upload
        // reads the file twice, validate then store), and opening a FIFO blocks until a writer appears.
        InputFiles.problem(file).ifPresent(problem -> {
            if (!Files.exists(file, LinkOption.NOFOLLOW_LINKS)) {
                throw new InvalidDatasetException(file, 0, 0, "no such file; check the path");
            }
            String hint = Files.isDirectory(file)
                    ? "give a JSONL file, or a directory of .parquet shards"
                    : Files.isRegularFile(file)
                            ? "check the file's permissions"
                            : "upload reads the file twice, so save the data to a file first";
            throw new InvalidDatasetException(file, 0, 0, problem + "; " + hint);
        });
        try {
            return Files.size(file);
        } catch (NoSuchFileException e) {
            throw new InvalidDatasetException(file, 0, 0, "no such file; check the path");
        } catch (AccessDeniedException e) {
            throw new InvalidDatasetException(file, 0, 0, "permission denied; check the file's permissions");
        } catch (IOException e) {
            throw new UnavailableException("cannot read " + file + ": " + e.getMessage(), e);
        }
    }

    /** The source hash of what {@code from} yields: the one the upload passes compute. */
    private static Sha256 hashFile(UploadSource from) {
        Path file = from.file();
        java.security.MessageDigest digest = Sha256.newDigest();
        try (InputStream in = from.open()) {
            byte[] buffer = new byte[1 << 16];
            int n;
            while ((n = in.read(buffer)) > 0) {
                digest.update(buffer, 0, n);
            }
            return Sha256.ofDigest(digest.digest());
        } catch (NoSuchFileException e) {
            throw new InvalidDatasetException(file, 0, 0, "no such file; check the path");
        } catch (IOException e) {
            throw new UnavailableException("cannot read " + file + ": " + e.getMessage(), e);
        }
    }
}
