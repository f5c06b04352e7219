package dev.vigilo.dataset;

import dev.vigilo.common.concurrent.OrderedPipeline;
import dev.vigilo.common.input.TextEncoding;
import dev.vigilo.storage.Sha256;
import java.io.IOException;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.Arrays;
import java.util.Objects;
import java.util.Optional;

/**
 * The upload's first pass: reads the file in batches of whole lines on the calling thread (hashing every byte) and
 * validates each batch's lines on worker threads ({@link OrderedPipeline}); results come back in file order, so ids
 * reach the duplicate detector in file order and the error thrown is the first invalid line of the file, as in a
 * sequential pass. A batch's lines go through one JSON parser ({@link CaseLineParser#lines}); each valid case
 * leaves only a 64-bit fingerprint of its id, taken from the id's bytes in place when they are plain.
 *
 * <p>The result also records how many cases each batch held, which lets the store pass (reading the same file, cut
 * the same way) number its cases without waiting for earlier batches. Not thread-safe; use once.
 */
final class ValidationPass {
    /** Input of one batch; about this much is read before the lines are cut. */
    static final int BATCH_BYTES = 1 << 20;
    /** Batches in flight, and their bytes: enough to keep the workers busy, small against the heap. */
    static final int MAX_BATCHES = 8;
    /** Worker threads of a pass: one per core (at most 4), so the submitting thread shares them. */
    static final int THREADS = OrderedPipeline.processorsUpTo(4);
    /** What an interrupt of a pass cancels. */
    static final String INTERRUPTED = "the upload was interrupted";

    static final long MAX_BATCH_BYTES = 16L << 20;

    /** What the pass found: the case count, the source hash, and the cases of each batch. */
    /** @param bytes the bytes read: the file's, or the JSON lines a compressed or mapped source yields */
    record Result(long cases, Sha256 sourceSha256, int[] casesPerBatch, long bytes) {}

    /** One batch's outcome: its line count and the fingerprints of its cases, or its first error. */
    private record Checked(
            int batchBytes, int lines, int cases, long[] fingerprints, int errorLine, int errorColumn, String error) {
        static Checked failed(int line, int column, String error) {
            return new Checked(0, 0, 0, null, line, column, error);
        }
    }

    private final Path file;
    private final long size;
    private final UploadProgress progress;
    private final DuplicateIdDetector ids;
    private final ThreadLocal<CaseLineParser> parsers =
            ThreadLocal.withInitial(() -> new CaseLineParser(DatasetLimits.MAX_CASE_BYTES));
    private final ThreadLocal<MessageDigest> digests = ThreadLocal.withInitial(Sha256::newDigest);
    private int[] casesPerBatch = new int[64];
    private int batches;
    private long lines;
    private long cases;
    private long bytesDone;

    ValidationPass(Path file, long size, UploadProgress progress, DuplicateIdDetector ids) {
        this.file = Objects.requireNonNull(file, "file");
        this.size = size;
        this.progress = Objects.requireNonNull(progress, "progress");
        this.ids = Objects.requireNonNull(ids, "ids");
    }

    /**
     * Reads and validates the whole file from {@code source}.
     *
     * @throws InvalidDatasetException for the first invalid line of the file
     */
    Result run(SourceBatches source) throws IOException {
        try (OrderedPipeline<Checked> work =
                new OrderedPipeline<>("validate", THREADS, MAX_BATCHES, MAX_BATCH_BYTES, INTERRUPTED)) {
            while (true) {
                SourceBatches.Batch batch;
                try {
                    batch = source.next();
                } catch (SourceBatches.LineTooLongException tooLong) {
                    // An earlier line may be invalid too: the first error of the file wins.
                    work.finish(this::consume);
                    throw DatasetUploader.tooLong(file, lines + 1);
                }
                if (batch == null) {
                    break;
                }
                work.submit(() -> check(batch), batch.length(), this::consume);
            }
            work.finish(this::consume);
        }
        progress.update(UploadProgress.Phase.VALIDATE, bytesDone, size, cases);
        return new Result(cases, source.sourceSha256(), Arrays.copyOf(casesPerBatch, batches), bytesDone);
    }

    /** On a worker thread: validates every line of one batch. */
    private Checked check(SourceBatches.Batch batch) {
        CaseLineParser parser = parsers.get();
        MessageDigest digest = digests.get();
        byte[] scratch = new byte[Sha256.LENGTH];
        byte[] bytes = batch.bytes();
        BatchLines lines = new BatchLines(batch);
        if (batch.startsFile()) {
            // A file saved as UTF-16 or UTF-32 is named as such, not reported as a bad byte of its first line.
            Optional<String> foreign = TextEncoding.notUtf8(bytes, batch.length());
            if (foreign.isPresent()) {
                return Checked.failed(1, 1, foreign.get());
            }
        }
        long[] fingerprints = new long[Math.max(16, batch.length() / 128)];
        int count = 0;
        try (CaseLineParser.Lines shared = parser.lines(bytes, batch.length())) {
            while (lines.next()) {
                if (lines.isBlank()) {
                    continue;
                }
                long fingerprint;
                if (shared.judge(lines.start(), lines.end())) {
                    fingerprint = shared.idText() == null
                            ? DuplicateIdDetector.fingerprint(
                                    digest, scratch, bytes, shared.idStart(), shared.idLength())
                            : DuplicateIdDetector.fingerprint(digest, shared.idText());
                } else {
                    try {
                        String id = parser.parse(bytes, lines.start(), lines.length())
                                .id();
                        fingerprint = DuplicateIdDetector.fingerprint(digest, id);
                    } catch (CaseLineParser.CaseSyntaxException e) {
                        return Checked.failed(lines.lineNumber(), e.column, e.getMessage());
                    }
                }
                if (count == fingerprints.length) {
                    fingerprints = Arrays.copyOf(fingerprints, count * 2);
                }
                fingerprints[count++] = fingerprint;
            }
        }
        return new Checked(batch.length(), lines.lineNumber(), count, fingerprints, 0, 0, null);
    }

    /** On the reading thread, in file order. */
    private void consume(Checked checked) {
        if (checked.error() != null) {
            throw new InvalidDatasetException(
                    file, lines + checked.errorLine(), checked.errorColumn(), checked.error());
        }
        for (int i = 0; i < checked.cases(); i++) {
            ids.add(checked.fingerprints()[i]);
        }
        if (batches == casesPerBatch.length) {
            casesPerBatch = Arrays.copyOf(casesPerBatch, batches * 2);
        }
        casesPerBatch[batches++] = checked.cases();
        lines += checked.lines();
        cases += checked.cases();
        bytesDone += checked.batchBytes();
        progress.update(UploadProgress.Phase.VALIDATE, bytesDone, size, cases);
    }
}
