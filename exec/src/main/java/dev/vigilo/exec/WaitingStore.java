package dev.vigilo.exec;

import dev.vigilo.storage.Deadline;
import dev.vigilo.storage.ObjectInfo;
import dev.vigilo.storage.ObjectKey;
import dev.vigilo.storage.ObjectRef;
import dev.vigilo.storage.ObjectStore;
import dev.vigilo.storage.StoreBinding;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * An {@link ObjectStore} that waits out outages of the store it wraps ({@link OutageWaits}), like
 * {@link WaitingReader}: a create that fails because the store is unreachable, full or read-only is tried again (a
 * create of the same bytes is idempotent, so a try whose outcome was lost succeeds against its own object). Conflicts,
 * missing or damaged objects and cancellation end the call as the store reports them. {@link #close()} leaves the
 * wrapped store open: its owner closes it. Thread-safe.
 */
public final class WaitingStore implements ObjectStore {
    private final ObjectStore store;
    private final OutageWaits waits;

    public WaitingStore(ObjectStore store, OutageWaits waits) {
        this.store = Objects.requireNonNull(store, "store");
        this.waits = Objects.requireNonNull(waits, "waits");
    }

    @Override
    public StoreBinding binding() {
        return store.binding();
    }

    @Override
    public ObjectRef create(ObjectKey key, byte[] bytes, Deadline deadline) {
        Duration budget = WaitingReader.retryBudget(deadline);
        return waits.await(
                Service.STORE,
                binding().value(),
                attempt -> store.create(key, bytes, attempt == 1 ? deadline : Deadline.after(budget)));
    }

    @Override
    public byte[] read(ObjectRef ref, Deadline deadline) {
        Duration budget = WaitingReader.retryBudget(deadline);
        return waits.await(
                Service.STORE,
                binding().value(),
                attempt -> store.read(ref, attempt == 1 ? deadline : Deadline.after(budget)));
    }

    @Override
    public Optional<ObjectInfo> head(ObjectKey key, Deadline deadline) {
        Duration budget = WaitingReader.retryBudget(deadline);
        return waits.await(
                Service.STORE,
                binding().value(),
                attempt -> store.head(key, attempt == 1 ? deadline : Deadline.after(budget)));
    }

    @Override
    public List<ObjectInfo> list(String prefix, Deadline deadline) {
        Duration budget = WaitingReader.retryBudget(deadline);
        return waits.await(
                Service.STORE,
                binding().value(),
                attempt -> store.list(prefix, attempt == 1 ? deadline : Deadline.after(budget)));
    }

    /** Leaves the wrapped store open (its owner closes it). */
    @Override
    public void close() {}
}
