package dev.vigilo.exec;

import dev.vigilo.storage.Deadline;
import dev.vigilo.storage.ObjectReader;
import dev.vigilo.storage.ObjectRef;
import dev.vigilo.storage.StoreBinding;
import java.time.Duration;
import java.util.Objects;
import java.util.function.Function;

/**
 * An {@link ObjectReader} that waits out outages of its store ({@link OutageWaits}): a read failing because the
 * store cannot be reached is tried again after a back-off, for as long as the outage lasts, each try with as long a
 * deadline as the first had (at least {@link #MIN_RETRY_DEADLINE}). Missing or damaged objects and cancellation end
 * the read as the underlying reader reports them. Thread-safe.
 */
public final class WaitingReader implements ObjectReader {
    /** The shortest deadline a try after an outage gets, so a caller's spent budget cannot make every try fail. */
    static final Duration MIN_RETRY_DEADLINE = Duration.ofSeconds(10);

    private final ObjectReader reader;
    private final OutageWaits waits;

    public WaitingReader(ObjectReader reader, OutageWaits waits) {
        this.reader = Objects.requireNonNull(reader, "reader");
        this.waits = Objects.requireNonNull(waits, "waits");
    }

    @Override
    public StoreBinding binding() {
        return reader.binding();
    }

    @Override
    public byte[] readSlice(ObjectRef slice, long offset, Deadline deadline) {
        return await(waits, binding(), deadline, d -> reader.readSlice(slice, offset, d));
    }

    @Override
    public byte[] read(ObjectRef ref, Deadline deadline) {
        return await(waits, binding(), deadline, d -> reader.read(ref, d));
    }

    /**
     * One call to a store through the outage waits: the first try with the caller's {@code deadline}, each try after
     * an outage with {@link #retryBudget}. Shared with {@link WaitingStore}.
     */
    static <T> T await(OutageWaits waits, StoreBinding store, Deadline deadline, Function<Deadline, T> call) {
        Duration budget = retryBudget(deadline);
        return waits.await(
                Service.STORE, store.value(), attempt -> call.apply(attempt == 1 ? deadline : Deadline.after(budget)));
    }

    /** The deadline length of a try after the first: the first try's, at least {@link #MIN_RETRY_DEADLINE}. */
    static Duration retryBudget(Deadline first) {
        Duration left = first.remaining();
        return left.compareTo(MIN_RETRY_DEADLINE) < 0 ? MIN_RETRY_DEADLINE : left;
    }
}
