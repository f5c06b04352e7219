package dev.vigilo.cli;

import java.time.Duration;
import java.util.function.Supplier;

/**
 * Runs work so that Ctrl-C cancels it cleanly: on SIGINT the JVM runs shutdown hooks while the main thread keeps
 * going, so a hook interrupts the working thread and waits (bounded) for it to yield its authority (for example a
 * creation lease) before the JVM exits.
 */
final class Interruptible {
    private static final Duration YIELD_WAIT = Duration.ofSeconds(10);

    private Interruptible() {}

    static <T> T run(Supplier<T> work) {
        Thread worker = Thread.currentThread();
        Object done = new Object();
        boolean[] finished = {false};
        Thread hook = new Thread(
                () -> {
                    synchronized (done) {
                        if (finished[0]) {
                            return;
                        }
                        worker.interrupt();
                        try {
                            done.wait(YIELD_WAIT.toMillis());
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                    }
                },
                "vigilo-cancel");
        Runtime.getRuntime().addShutdownHook(hook);
        try {
            return work.get();
        } finally {
            synchronized (done) {
                finished[0] = true;
                done.notifyAll();
            }
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException e) {
                // The JVM is already shutting down: the hook is running and was just released.
            }
        }
    }
}
