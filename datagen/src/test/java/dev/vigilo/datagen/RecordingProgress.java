package dev.vigilo.datagen;

import java.util.ArrayList;
import java.util.List;

/** Records a run's progress calls, and the threads they came from. */
final class RecordingProgress implements DatagenProgress {
    /** One call: {@code itemId} and {@code status} are null for {@link #started}. */
    record Call(String itemId, ItemStatus status, int finished, int failed, int items, Thread thread) {}

    final List<Call> calls = new ArrayList<>();

    @Override
    public void started(int finished, int failed, int items) {
        calls.add(new Call(null, null, finished, failed, items, Thread.currentThread()));
    }

    @Override
    public void itemFinished(String itemId, ItemStatus status, int finished, int failed, int items) {
        calls.add(new Call(itemId, status, finished, failed, items, Thread.currentThread()));
    }

    List<Call> finishedItems() {
        return calls.stream().filter(c -> c.itemId() != null).toList();
    }
}
