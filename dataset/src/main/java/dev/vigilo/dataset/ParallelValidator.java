package dev.vigilo.dataset;

import dev.vigilo.common.errors.CancelledException;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Deque;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.Consumer;

/**
 * Validates case lines on a small pool of parser threads while the calling thread reads and hashes the file.
 *
 * <p>Lines travel in batches of about {@link #BATCH_BYTES} (plus at most one line, itself at most
 * {@link DatasetLimits#MAX_CASE_BYTES}); at most {@link #IN_FLIGHT} batches are pending, which bounds memory.
 * Results are consumed in file order on the calling thread, so ids reach the consumer in file order and the error
 * thrown is always the first invalid line of the file, exactly as in a sequential pass. Not thread-safe: one
 * uploading thread drives it.
 */
final class ParallelValidator implements AutoCloseable {
    static final int BATCH_BYTES = 1 << 20;
    static final int BATCH_LINES = 4096;
    static final int IN_FLIGHT = 4;

    private final Path file;
    private final Consumer<String> ids;
    private final ExecutorService pool;
    private final ThreadLocal<CaseLineParser> parsers =
            ThreadLocal.withInitial(() -> new CaseLineParser(DatasetLimits.MAX_CASE_BYTES));
    private final Deque<Future<Result>> pending = new ArrayDeque<>();
    private Batch batch = new Batch();
    private long cases;

    /**
     * @param file the file being validated, for error messages
     * @param ids  receives every valid case id, in file order, on the calling thread
     */
    ParallelValidator(Path file, Consumer<String> ids) {
        this.file = Objects.requireNonNull(file, "file");
        this.ids = Objects.requireNonNull(ids, "ids");
        int threads = Math.max(1, Math.min(4, Runtime.getRuntime().availableProcessors()));
        this.pool = Executors.newFixedThreadPool(threads, r -> {
            Thread t = new Thread(r, "vigilo-validate");
            t.setDaemon(true);
            return t;
        });
    }

    /** Queues one non-blank line (copied); may throw the error of an earlier line. */
    void add(long lineNumber, byte[] bytes, int length) {
        batch.add(lineNumber, Arrays.copyOf(bytes, length));
        if (batch.bytes >= BATCH_BYTES || batch.lines.size() >= BATCH_LINES) {
            submit();
        }
    }

    /**
     * Waits until every line added so far is validated.
     *
     * @throws InvalidDatasetException for the first invalid line of the file
     */
    void finish() {
        submit();
        while (!pending.isEmpty()) {
            consume(pending.removeFirst());
        }
    }

    /** Valid cases consumed so far. */
    long cases() {
        return cases;
    }

    private void submit() {
        if (batch.lines.isEmpty()) {
            return;
        }
        Batch full = batch;
        batch = new Batch();
        pending.addLast(pool.submit(() -> validate(full)));
        while (pending.size() > IN_FLIGHT) {
            consume(pending.removeFirst());
        }
    }

    private Result validate(Batch b) {
        CaseLineParser parser = parsers.get();
        String[] batchIds = new String[b.lines.size()];
        for (int i = 0; i < batchIds.length; i++) {
            byte[] line = b.lines.get(i);
            try {
                batchIds[i] = parser.parse(line, line.length).id();
            } catch (CaseLineParser.CaseSyntaxException e) {
                return new Result(
                        null, new InvalidDatasetException(file, b.lineNumbers.get(i), e.column, e.getMessage()));
            }
        }
        return new Result(batchIds, null);
    }

    private void consume(Future<Result> future) {
        Result result;
        try {
            result = future.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CancelledException("validation of " + file + " was interrupted", e);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException re) {
                throw re;
            }
            throw new IllegalStateException("validation of " + file + " failed", e.getCause());
        }
        if (result.error() != null) {
            throw result.error();
        }
        for (String id : result.ids()) {
            ids.accept(id);
        }
        cases += result.ids().length;
    }

    @Override
    public void close() {
        for (Future<Result> f : pending) {
            f.cancel(true);
        }
        pending.clear();
        pool.shutdownNow();
    }

    private static final class Batch {
        final List<byte[]> lines = new ArrayList<>();
        final List<Long> lineNumbers = new ArrayList<>();
        long bytes;

        void add(long lineNumber, byte[] line) {
            lines.add(line);
            lineNumbers.add(lineNumber);
            bytes += line.length;
        }
    }

    /** The ids of a valid batch, or the error of its first invalid line. */
    private record Result(String[] ids, InvalidDatasetException error) {}
}
