package dev.vigilo.cli;

import dev.vigilo.common.concurrent.Threads;
import dev.vigilo.exec.view.ExecutionStatusReader;
import dev.vigilo.exec.worker.Worker;
import java.util.UUID;

/**
 * The watcher of the commands that run an in-process worker for one run ({@code quickstart}, {@code eval}): it stops
 * the worker once the run ended, whoever ended it (this worker's settlement, another worker sharing the control
 * database, {@code run cancel}), so the worker never outlives the run it was started for.
 */
final class RunEndWatch {
    private RunEndWatch() {}

    /** Starts a daemon thread {@code name} that reads the run's status every {@code intervalMillis}. */
    static Thread stopWhenEnded(
            ExecutionStatusReader reader, UUID run, Worker worker, String name, long intervalMillis) {
        return Threads.startDaemon(name, () -> {
            while (!Thread.currentThread().isInterrupted()) {
                try {
                    Thread.sleep(intervalMillis);
                    if (reader.status(run).finished()) {
                        worker.stop();
                        return;
                    }
                } catch (InterruptedException e) {
                    return;
                } catch (RuntimeException e) {
                    // Unreadable for a moment: the worker goes on; look again.
                }
            }
        });
    }
}
