package dev.vigilo.dataset;

import com.fasterxml.jackson.core.io.JsonStringEncoder;
import dev.vigilo.common.concurrent.OrderedPipeline;
import dev.vigilo.storage.ObjectRef;
import dev.vigilo.storage.Sha256;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.DigestException;
import java.security.MessageDigest;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.Deque;
import java.util.Objects;
import java.util.concurrent.Future;

/**
 * The upload's second pass: reads the file again in the same batches as {@link ValidationPass}, encodes each
 * batch's case records and fold entries on worker threads, and on the reading thread, in file order, folds the
 * cases, cuts the records into case files by the layout's rules and hands each case file to the {@link ObjectWriter}
 * (which hashes it for its content address and creates it). Case files enter the index in order as their creates
 * complete.
 *
 * <p>The validation pass already checked every line, so a case's id is read from the line's bytes when the line
 * starts with a plain id ({@link CaseLineParser#plainLeadingIdLength}) and parsed otherwise. If the file changed
 * in between, the batches or the source hash disagree with the first pass and the upload fails before its commit
 * point. Not thread-safe; use once.
 */
final class StorePass {
    /** A record's size beyond the case itself, charged per id character, as the case file cut rule counts it. */
    private static final int RECORD_OVERHEAD = 160;

    private static final int RECORD_OVERHEAD_PER_ID_CHAR = 6;

    /** One batch, encoded: its records back to back, where each ends, its fold entries, or its first error. */
    private record Encoded(
            int batchBytes,
            int lines,
            int cases,
            byte[] records,
            int[] recordEnds,
            int[] cutCosts,
            byte[] foldEntries,
            int foldLength,
            int errorLine,
            int errorColumn,
            String error) {
        static Encoded failed(int line, int column, String error) {
            return new Encoded(0, 0, 0, null, null, null, null, 0, line, column, error);
        }
    }

    private record PendingCaseFile(Future<ObjectRef> ref, long firstOrdinal, int count) {}

    private final Path file;
    private final long size;
    private final UploadProgress progress;
    private final UploadLayout layout;
    private final ValidationPass.Result validated;
    private final ObjectWriter writer;
    private final IndexBuilder index;
    private final ThreadLocal<CaseLineParser> parsers =
            ThreadLocal.withInitial(() -> new CaseLineParser(DatasetLimits.MAX_CASE_BYTES));
    private final ThreadLocal<MessageDigest> digests = ThreadLocal.withInitial(Sha256::newDigest);
    private final CaseFold fold = new CaseFold();
    private final CaseFileFormat.Builder caseFile = new CaseFileFormat.Builder();
    private final Deque<PendingCaseFile> caseFiles = new ArrayDeque<>();
    private long lines;
    private long ordinal;
    private long bytesDone;
    private int batchesConsumed;

    StorePass(
            Path file,
            long size,
            UploadProgress progress,
            UploadLayout layout,
            ValidationPass.Result validated,
            ObjectWriter writer,
            IndexBuilder index) {
        this.file = Objects.requireNonNull(file, "file");
        this.size = size;
        this.progress = Objects.requireNonNull(progress, "progress");
        this.layout = Objects.requireNonNull(layout, "layout");
        this.validated = Objects.requireNonNull(validated, "validated");
        this.writer = Objects.requireNonNull(writer, "writer");
        this.index = Objects.requireNonNull(index, "index");
    }

    /**
     * Stores every case of the file read from {@code source}; returns the fold over all cases once every case file
     * is durable and indexed (the index itself is not finished).
     *
     * @throws InvalidDatasetException when the file changed since the validation pass
     */
    Sha256 run(SourceBatches source) throws IOException {
        int[] perBatch = validated.casesPerBatch();
        try (OrderedPipeline<Encoded> work = new OrderedPipeline<>(
                "store",
                ValidationPass.THREADS,
                ValidationPass.MAX_BATCHES,
                ValidationPass.MAX_BATCH_BYTES,
                ValidationPass.INTERRUPTED)) {
            long firstOrdinal = 0;
            while (true) {
                SourceBatches.Batch batch;
                try {
                    batch = source.next();
                } catch (SourceBatches.LineTooLongException tooLong) {
                    work.finish(this::consume);
                    throw DatasetUploader.tooLong(file, lines + 1);
                }
                if (batch == null) {
                    break;
                }
                if (batch.index() >= perBatch.length) {
                    work.finish(this::consume);
                    throw changed();
                }
                long first = firstOrdinal;
                work.submit(() -> encode(batch, first), batch.length(), this::consume);
                firstOrdinal += perBatch[(int) batch.index()];
            }
            work.finish(this::consume);
        }
        progress.update(UploadProgress.Phase.STORE, bytesDone, size, ordinal);
        if (batchesConsumed != perBatch.length
                || ordinal != validated.cases()
                || !source.sourceSha256().equals(validated.sourceSha256())) {
            throw changed();
        }
        flushCaseFile();
        while (!caseFiles.isEmpty()) {
            indexOldest();
        }
        return fold.finish();
    }

    /** On a worker thread: encodes the records and fold entries of one batch, numbering from {@code firstOrdinal}. */
    private Encoded encode(SourceBatches.Batch batch, long firstOrdinal) {
        CaseLineParser parser = parsers.get();
        MessageDigest digest = digests.get();
        byte[] sha = new byte[Sha256.LENGTH];
        byte[] bytes = batch.bytes();
        // A record adds about 100 bytes plus the id to its case; twice the batch is rarely exceeded.
        GrowableBytes records = new GrowableBytes(2 * batch.length() + 1024);
        GrowableBytes foldEntries = new GrowableBytes(batch.length() / 2 + 1024);
        int[] recordEnds = new int[Math.max(16, batch.length() / 128)];
        int[] cutCosts = new int[recordEnds.length];
        int count = 0;
        long next = firstOrdinal;
        BatchLines lines = new BatchLines(batch);
        while (lines.next()) {
            if (lines.isBlank()) {
                continue;
            }
            int start = lines.start();
            int length = lines.length();
            byte[] id;
            int idOffset;
            int idLength;
            byte[] quoted;
            int quotedOffset;
            int quotedLength;
            int idChars;
            int plain = CaseLineParser.plainLeadingIdLength(bytes, start, length);
            if (plain > 0) {
                // Plain ASCII: the bytes are the id, its UTF-8 form and its JSON-quoted form at once.
                id = bytes;
                idOffset = start + CaseLineParser.LEADING_ID_OFFSET;
                idLength = plain;
                quoted = bytes;
                quotedOffset = idOffset;
                quotedLength = plain;
                idChars = plain;
            } else {
                String text;
                try {
                    text = parser.idOf(bytes, start, length);
                } catch (CaseLineParser.CaseSyntaxException e) {
                    return Encoded.failed(
                            lines.lineNumber(),
                            e.column,
                            "the file changed while it was being uploaded (" + e.getMessage() + ")");
                }
                id = text.getBytes(StandardCharsets.UTF_8);
                idOffset = 0;
                idLength = id.length;
                quoted = JsonStringEncoder.getInstance().quoteAsUTF8(text);
                quotedOffset = 0;
                quotedLength = quoted.length;
                idChars = text.length();
            }
            digest.update(bytes, start, length);
            try {
                digest.digest(sha, 0, Sha256.LENGTH);
            } catch (DigestException e) {
                throw new IllegalStateException("a SHA-256 digest needs 32 bytes", e);
            }
            CaseFileFormat.encodeRecord(
                    records, next, quoted, quotedOffset, quotedLength, sha, 0, bytes, start, length);
            CaseFold.encode(foldEntries, next, id, idOffset, idLength, sha, 0);
            if (count == recordEnds.length) {
                recordEnds = Arrays.copyOf(recordEnds, count * 2);
                cutCosts = Arrays.copyOf(cutCosts, count * 2);
            }
            recordEnds[count] = records.size();
            cutCosts[count] = length + RECORD_OVERHEAD + idChars * RECORD_OVERHEAD_PER_ID_CHAR;
            count++;
            next++;
        }
        return new Encoded(
                batch.length(),
                lines.lineNumber(),
                count,
                records.array(),
                recordEnds,
                cutCosts,
                foldEntries.array(),
                foldEntries.size(),
                0,
                0,
                null);
    }

    /** On the reading thread, in file order: folds the batch and cuts its records into case files. */
    private void consume(Encoded encoded) {
        if (encoded.error() != null) {
            throw new InvalidDatasetException(
                    file, lines + encoded.errorLine(), encoded.errorColumn(), encoded.error());
        }
        if (encoded.cases() != validated.casesPerBatch()[batchesConsumed]) {
            throw changed();
        }
        batchesConsumed++;
        fold.addEncoded(encoded.foldEntries(), 0, encoded.foldLength(), encoded.cases());
        int recordStart = 0;
        for (int i = 0; i < encoded.cases(); i++) {
            if (!caseFile.isEmpty()
                    && (caseFile.count() == layout.caseFileMaxCases()
                            || caseFile.recordBytes() + encoded.cutCosts()[i] > layout.caseFileTargetBytes())) {
                flushCaseFile();
            }
            int recordEnd = encoded.recordEnds()[i];
            caseFile.addRecord(ordinal++, encoded.records(), recordStart, recordEnd - recordStart);
            recordStart = recordEnd;
        }
        lines += encoded.lines();
        bytesDone += encoded.batchBytes();
        progress.update(UploadProgress.Phase.STORE, bytesDone, size, ordinal);
    }

    private void flushCaseFile() {
        if (caseFile.isEmpty()) {
            return;
        }
        byte[] bytes = caseFile.encode();
        caseFiles.addLast(new PendingCaseFile(
                writer.submitContentAddressed(bytes, DatasetKeys::caseFile),
                caseFile.firstOrdinal(),
                caseFile.count()));
        caseFile.reset();
        // Index the case files whose creates completed, in order; the writer bounds how many are pending.
        while (!caseFiles.isEmpty() && caseFiles.peekFirst().ref().isDone()) {
            indexOldest();
        }
    }

    private void indexOldest() {
        PendingCaseFile oldest = caseFiles.removeFirst();
        index.addCaseFile(ObjectWriter.join(oldest.ref()), oldest.firstOrdinal(), oldest.count());
    }

    private InvalidDatasetException changed() {
        return new InvalidDatasetException(
                file, 0, 0, "the file changed while it was being uploaded; upload a file that is not being written to");
    }
}
