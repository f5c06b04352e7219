package dev.vigilo.dataset;

import dev.vigilo.common.concurrent.Futures;
import dev.vigilo.common.concurrent.Threads;
import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.storage.Deadline;
import dev.vigilo.storage.ObjectIntegrityException;
import dev.vigilo.storage.ObjectNotFoundException;
import dev.vigilo.storage.ObjectReader;
import dev.vigilo.storage.ObjectRef;
import dev.vigilo.storage.ObjectStore;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Deque;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.Consumer;

/**
 * Reads a finalized dataset's cases in submitted order, verifying every byte on the way: each object against its
 * reference (length and SHA-256), each index document's structure and ordinal tiling, each case file completely
 * (header, every record's ordinal, hash and id, including records outside a requested range) before any of its
 * cases is passed on. A whole traversal also checks the case count and membership fold against the catalog entry
 * ({@link #readVerified}).
 *
 * <p>Range reads ({@link #forEachCaseInRange}, {@link #caseFilesInRange}) read only the index documents and case
 * files whose ordinal ranges overlap the requested range. Memory stays bounded whatever the dataset's size: one
 * path of index documents (at most {@link DatasetLimits#MAX_INDEX_LEVELS}, each at most
 * {@link DatasetLimits#INDEX_MAX_BYTES}) and one decoded case file.
 *
 * <p>Objects are read through an {@link ObjectReader} whose binding must be the dataset's store: the
 * {@link ObjectStore} itself, or a {@link dev.vigilo.storage.CachingObjectReader} over it. Each object read has a
 * 120-second deadline and honours thread interruption. Storage failures other than a missing or damaged object
 * (timeouts, cancellation, an unavailable store) propagate as the storage module's exceptions. Not thread-safe;
 * open one reader per traversal.
 */
public final class DatasetReader {
    private static final Duration READ_TIMEOUT = Duration.ofSeconds(120);

    /** Most case files a read-ahead decodes beyond the one being consumed. */
    public static final int MAX_READ_AHEAD = 16;

    private final DatasetEntry entry;
    private final ObjectReader store;
    private final int readAhead;
    /** Decoded, verified files shared with other readers of the same worker; null: every file is decoded. */
    private final DecodedFileCache decoded;

    private final CaseFileDecoder decoder = newDecoder();
    private long caseFiles;
    private long indexDocuments;
    private long bytesRead;

    private DatasetReader(DatasetEntry entry, ObjectReader store, int readAhead, DecodedFileCache decoded) {
        this.entry = entry;
        this.store = store;
        this.readAhead = readAhead;
        this.decoded = decoded;
    }

    /**
     * A reader of the same dataset that reads and verifies up to {@code caseFiles} case files ahead of the one its
     * consumer is given, each on its own thread (a read from a remote store mostly waits for its round trip, so a
     * pool sized to the cores would keep fewer reads in flight than asked for); the consumer still runs
     * on the calling thread, in ordinal order, and every file is verified completely before any of its cases is
     * passed on. Memory grows by at most {@code caseFiles} decoded case files (each at most
     * {@link DatasetLimits#CASE_FILE_TARGET_BYTES} plus one case). 0 reads one file at a time on the calling thread.
     *
     * @throws IllegalArgumentException when {@code caseFiles} is negative or above {@link #MAX_READ_AHEAD}
     */
    public DatasetReader withReadAhead(int caseFiles) {
        if (caseFiles < 0 || caseFiles > MAX_READ_AHEAD) {
            throw new IllegalArgumentException(
                    "read-ahead must be 0.." + MAX_READ_AHEAD + " case files, got " + caseFiles);
        }
        return new DatasetReader(entry, store, caseFiles, decoded);
    }

    /**
     * Opens a reader of {@code entry}'s files in {@code store}.
     *
     * @throws InvalidInputException when {@code store} is not the store the dataset was written to
     */
    public static DatasetReader open(DatasetEntry entry, ObjectStore store) {
        return open(entry, (ObjectReader) store);
    }

    /**
     * Opens a reader of {@code entry}'s files through {@code reader}, for example a cache shared by a worker's
     * reads.
     *
     * @throws InvalidInputException when {@code reader}'s binding is not the store the dataset was written to
     */
    public static DatasetReader open(DatasetEntry entry, ObjectReader reader) {
        Objects.requireNonNull(entry, "entry");
        Objects.requireNonNull(reader, "reader");
        if (!reader.binding().equals(entry.storage())) {
            throw new InvalidInputException("dataset " + entry.uploadId() + " is stored in " + entry.storage()
                    + ", but the configured store is " + reader.binding()
                    + "; point --storage-config at a configuration with a store bound to " + entry.storage());
        }
        return new DatasetReader(entry, reader, 0, null);
    }

    /**
     * Opens a reader of {@code entry}'s files through {@code reader} that takes decoded case files and index
     * documents from {@code decoded} and retains what it decodes there, so that readers sharing the cache (a
     * worker's chunks) decode each file once while it is retained. Every check is still made once per retained
     * outcome, and each case served from the cache has its bytes hashed again before it is passed on
     * ({@link DecodedFileCache}).
     *
     * @throws InvalidInputException when {@code reader}'s binding is not the store the dataset was written to
     */
    public static DatasetReader open(DatasetEntry entry, ObjectReader reader, DecodedFileCache decoded) {
        Objects.requireNonNull(decoded, "decoded");
        DatasetReader r = open(entry, reader);
        return new DatasetReader(r.entry, r.store, 0, decoded);
    }

    /** The catalog entry this reader reads. */
    public DatasetEntry entry() {
        return entry;
    }

    /**
     * Calls {@code consumer} with every case, in ordinal order, each verified before it is passed on.
     *
     * @throws DatasetDamagedException on the first object that is missing or inconsistent
     */
    public void forEachCase(Consumer<StoredCase> consumer) {
        Objects.requireNonNull(consumer, "consumer");
        readCaseFiles(0, entry.caseCount(), consumer, null);
    }

    /**
     * Calls {@code consumer} with the cases of ordinals {@code [firstOrdinal, firstOrdinal + count)}, in ordinal
     * order. Reads only the index documents and case files overlapping the range; each case file it touches is
     * verified completely, including its records outside the range, before any of its cases is passed on.
     *
     * @throws InvalidInputException   when {@code count < 1} or the range does not lie within the dataset's cases
     * @throws DatasetDamagedException on the first touched object that is missing or inconsistent
     */
    public void forEachCaseInRange(long firstOrdinal, long count, Consumer<StoredCase> consumer) {
        Objects.requireNonNull(consumer, "consumer");
        checkRange(firstOrdinal, count);
        readCaseFiles(firstOrdinal, count, consumer, null);
    }

    /**
     * The case files holding ordinals {@code [firstOrdinal, firstOrdinal + count)}, in ordinal order, found by
     * reading (and verifying) only the index documents overlapping the range; no case file is read. The list has
     * one element per file, so at most {@code count} elements. A caller sums their lengths to budget its memory
     * before reading them with {@link #forEachCaseInFile}.
     *
     * @throws InvalidInputException   when {@code count < 1} or the range does not lie within the dataset's cases
     * @throws DatasetDamagedException on the first touched index document that is missing or inconsistent
     */
    public List<CaseFileSpan> caseFilesInRange(long firstOrdinal, long count) {
        checkRange(firstOrdinal, count);
        List<CaseFileSpan> files = new ArrayList<>();
        traverse(firstOrdinal, count, files::add);
        return files;
    }

    /**
     * Reads one case file of this dataset (as {@link #caseFilesInRange} returned it), verifies it completely and
     * calls {@code consumer} with its cases within {@code [firstOrdinal, firstOrdinal + count)}, in ordinal order.
     *
     * @throws InvalidInputException   when {@code count < 1} or the range does not overlap {@code file}
     * @throws DatasetDamagedException when the file is missing or inconsistent with {@code file}'s range
     */
    public void forEachCaseInFile(CaseFileSpan file, long firstOrdinal, long count, Consumer<StoredCase> consumer) {
        Objects.requireNonNull(file, "file");
        Objects.requireNonNull(consumer, "consumer");
        if (count < 1 || firstOrdinal >= file.endOrdinal() || firstOrdinal + count <= file.firstOrdinal()) {
            throw new InvalidInputException(
                    "ordinal range " + describe(firstOrdinal, count) + " does not overlap case file "
                            + file.ref().key() + " " + describe(file.firstOrdinal(), file.caseCount()) + " of dataset "
                            + entry.uploadId());
        }
        deliver(decode(file, decoder, firstOrdinal, count, false), consumer, null);
    }

    /**
     * Reads everything and checks the case count and the membership fold against the catalog entry.
     *
     * @throws DatasetDamagedException naming the first damaged object (or the root, for a fold mismatch)
     */
    public VerifyReport verify() {
        return readVerified(c -> {});
    }

    /**
     * Passes every case to {@code consumer} in ordinal order, like {@link #forEachCase}, while folding the ordered
     * case id/hash identity; at the end checks the case count and the membership UUID against the catalog entry.
     * This is the running identity check a complete pass (such as run preparation) binds itself to: a consumer that
     * saw every case is only valid if this method returns normally.
     *
     * @throws DatasetDamagedException on the first damaged object, or at the end when the count or fold differ
     */
    public VerifyReport readVerified(Consumer<StoredCase> consumer) {
        return readVerifiedFrom(0, new CaseFold(), consumer);
    }

    /**
     * Finishes a running identity check that the caller started: {@code prefix} is the ordered case fold over
     * ordinals {@code [0, firstOrdinal)} (each case's ordinal, id and SHA-256, from verified copies such as the
     * acknowledged chunk files of a plan built from this dataset). Reads and passes on only the cases from
     * {@code firstOrdinal} on, like {@link #forEachCaseInRange}, adding them to {@code prefix}; at the end checks the
     * case count and the membership UUID of the whole fold against the catalog entry, as {@link #readVerified} does.
     * A prefix that differs from the dataset's cases fails that check.
     *
     * @throws InvalidInputException   when {@code prefix} does not hold exactly {@code firstOrdinal} cases, or
     *                                 {@code firstOrdinal} is outside {@code [0, caseCount]}
     * @throws DatasetDamagedException on the first damaged object, or at the end when the count or fold differ
     */
    public VerifyReport readVerifiedFrom(long firstOrdinal, CaseFold prefix, Consumer<StoredCase> consumer) {
        Objects.requireNonNull(prefix, "prefix");
        Objects.requireNonNull(consumer, "consumer");
        if (firstOrdinal < 0 || firstOrdinal > entry.caseCount() || prefix.cases() != firstOrdinal) {
            throw new InvalidInputException("a fold of " + prefix.cases() + " cases cannot continue dataset "
                    + entry.uploadId() + " at ordinal " + firstOrdinal + " (it holds " + entry.caseCount() + ")");
        }
        long remaining = entry.caseCount() - firstOrdinal;
        if (remaining > 0) {
            readCaseFiles(firstOrdinal, remaining, consumer, prefix);
        }
        if (prefix.cases() != entry.caseCount()) {
            throw new DatasetDamagedException(
                    entry.indexRoot().key(),
                    "the index reaches " + prefix.cases() + " cases, the catalog records " + entry.caseCount());
        }
        var membership = CaseFold.membershipUuid(prefix.finish());
        if (!membership.equals(entry.membershipUuid())) {
            throw new DatasetDamagedException(
                    entry.indexRoot().key(),
                    "the case id/hash fold gives membership " + membership + ", the catalog records "
                            + entry.membershipUuid());
        }
        return new VerifyReport(prefix.cases(), caseFiles, indexDocuments, bytesRead);
    }

    private void checkRange(long firstOrdinal, long count) {
        if (count < 1
                || firstOrdinal < 0
                || firstOrdinal >= entry.caseCount()
                || count > entry.caseCount() - firstOrdinal) {
            throw new InvalidInputException("ordinal range " + describe(firstOrdinal, count) + " is not within dataset "
                    + entry.uploadId() + ", which holds ordinals [0, " + entry.caseCount()
                    + "); ask for at least one case inside it");
        }
    }

    private static String describe(long firstOrdinal, long count) {
        return "[" + firstOrdinal + ", " + (firstOrdinal + count) + ")";
    }

    /**
     * Visits, in ordinal order, every case file overlapping {@code [firstOrdinal, firstOrdinal + count)}, reading
     * only the index documents on the way to them. The range lies within the catalog's case count, and the root
     * is checked to cover exactly that count, so the visited files tile the range.
     */
    private void traverse(long firstOrdinal, long count, Consumer<CaseFileSpan> visitor) {
        long end = firstOrdinal + count;
        IndexDocument root = readIndex(entry.indexRoot(), -1, 0, entry.caseCount());
        if (root.level() + 1 != entry.indexLevels()) {
            throw new DatasetDamagedException(
                    entry.indexRoot().key(),
                    "root is at level " + root.level() + ", the catalog records " + entry.indexLevels() + " levels");
        }
        // Depth-first over index documents; each frame is one document and the position of its next entry.
        Deque<Frame> path = new ArrayDeque<>();
        path.push(new Frame(root));
        while (!path.isEmpty()) {
            Frame top = path.peek();
            if (top.next == top.doc.entries().size()) {
                path.pop();
                continue;
            }
            IndexEntry child = top.doc.entries().get(top.next++);
            if (child.firstOrdinal() >= end) {
                return; // depth-first order is ordinal order: everything left lies after the range
            }
            if (child.firstOrdinal() + child.caseCount() <= firstOrdinal) {
                continue;
            }
            if (top.doc.level() == 0) {
                visitor.accept(new CaseFileSpan(child.ref(), child.firstOrdinal(), child.caseCount()));
            } else {
                path.push(new Frame(
                        readIndex(child.ref(), top.doc.level() - 1, child.firstOrdinal(), child.caseCount())));
            }
        }
    }

    /**
     * Reads every case file overlapping the range, in order, with the configured read-ahead; when {@code fold} is
     * given, adds each passed-on case to it (encoded where the file is decoded, folded in order here).
     */
    private void readCaseFiles(long firstOrdinal, long count, Consumer<StoredCase> consumer, CaseFold fold) {
        if (readAhead == 0) {
            traverse(
                    firstOrdinal,
                    count,
                    file -> deliver(decode(file, decoder, firstOrdinal, count, fold != null), consumer, fold));
            return;
        }
        ExecutorService pool = Executors.newFixedThreadPool(readAhead, Threads.daemonFactory("dataset-read"));
        ThreadLocal<CaseFileDecoder> decoders = ThreadLocal.withInitial(DatasetReader::newDecoder);
        Deque<Future<DecodedFile>> ahead = new ArrayDeque<>();
        try {
            traverse(firstOrdinal, count, file -> {
                while (ahead.size() >= readAhead) {
                    deliver(join(ahead.removeFirst()), consumer, fold);
                }
                ahead.addLast(pool.submit(() -> decode(file, decoders.get(), firstOrdinal, count, fold != null)));
            });
            while (!ahead.isEmpty()) {
                deliver(join(ahead.removeFirst()), consumer, fold);
            }
        } finally {
            for (Future<DecodedFile> f : ahead) {
                f.cancel(true);
            }
            pool.shutdownNow();
        }
    }

    /** A case file read and verified completely: its cases inside the range, and their fold entries if asked. */
    private record DecodedFile(int bytes, List<StoredCase> cases, CaseFold.Batch foldEntries) {}

    private DecodedFile decode(
            CaseFileSpan file, CaseFileDecoder decoder, long firstOrdinal, long count, boolean foldEntries) {
        // The decoded file holds exactly the ordinals [file.firstOrdinal, file.endOrdinal) in order: the range's
        // cases are one contiguous run of it.
        int from = (int) (Math.max(firstOrdinal, file.firstOrdinal()) - file.firstOrdinal());
        int to = (int) (Math.min(firstOrdinal + count, file.endOrdinal()) - file.firstOrdinal());
        List<StoredCase> inRange;
        if (decoded == null) {
            inRange = decodeFile(file, decoder).subList(from, to);
        } else {
            var key = new DecodedFileCache.CaseKey(store.binding(), file.ref(), file.firstOrdinal(), file.caseCount());
            inRange = decoded.caseFile(key, () -> decodeFile(file, decoder)).subList(from, to);
            if (!bytesMatch(inRange, decoder.digest())) {
                // A retained case's bytes changed in memory: forget the file and decode it again from the store.
                decoded.discard(key);
                inRange = decoded.caseFile(key, () -> decodeFile(file, decoder)).subList(from, to);
            }
        }
        CaseFold.Batch batch = null;
        if (foldEntries) {
            batch = new CaseFold.Batch();
            for (StoredCase c : inRange) {
                batch.add(c.ordinal(), c.id(), c.sha256());
            }
        }
        return new DecodedFile((int) file.ref().length(), inRange, batch);
    }

    private List<StoredCase> decodeFile(CaseFileSpan file, CaseFileDecoder decoder) {
        byte[] bytes = read(file.ref());
        return decoder.decode(file.ref().key(), bytes, file.firstOrdinal(), file.caseCount());
    }

    /** Whether every case's bytes still hash to its SHA-256 (cases served from the shared cache). */
    private static boolean bytesMatch(List<StoredCase> cases, MessageDigest digest) {
        for (StoredCase c : cases) {
            digest.update(c.caseJson());
            if (!Arrays.equals(digest.digest(), c.sha256().toBytes())) {
                return false;
            }
        }
        return true;
    }

    private static CaseFileDecoder newDecoder() {
        return new CaseFileDecoder(new CaseLineParser(DatasetLimits.MAX_CASE_BYTES));
    }

    private void deliver(DecodedFile file, Consumer<StoredCase> consumer, CaseFold fold) {
        caseFiles++;
        bytesRead += file.bytes();
        if (fold != null) {
            fold.addAll(file.foldEntries());
        }
        for (StoredCase c : file.cases()) {
            consumer.accept(c);
        }
    }

    private static <T> T join(Future<T> f) {
        return Futures.join(f, "the dataset read was interrupted");
    }

    private IndexDocument readIndex(ObjectRef ref, int expectedLevel, long firstOrdinal, long count) {
        if (ref.length() > DatasetLimits.INDEX_MAX_BYTES) {
            throw new DatasetDamagedException(
                    ref.key(),
                    "index document of " + ref.length() + " bytes exceeds the format's bound of "
                            + DatasetLimits.INDEX_MAX_BYTES);
        }
        indexDocuments++;
        bytesRead += ref.length();
        if (decoded == null) {
            return IndexDocument.decode(ref.key(), read(ref), expectedLevel, firstOrdinal, count);
        }
        return decoded.index(
                new DecodedFileCache.IndexKey(store.binding(), ref, expectedLevel, firstOrdinal, count),
                () -> IndexDocument.decode(ref.key(), read(ref), expectedLevel, firstOrdinal, count));
    }

    private byte[] read(ObjectRef ref) {
        try {
            return store.read(ref, Deadline.after(READ_TIMEOUT));
        } catch (ObjectNotFoundException e) {
            throw new DatasetDamagedException(ref.key(), "missing from " + store.binding(), e);
        } catch (ObjectIntegrityException e) {
            throw new DatasetDamagedException(ref.key(), e.getMessage(), e);
        }
    }

    private static final class Frame {
        final IndexDocument doc;
        int next;

        Frame(IndexDocument doc) {
            this.doc = doc;
        }
    }
}
