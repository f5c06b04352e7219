package dev.vigilo.cli;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Graceful stop of a long-running command on SIGTERM or Ctrl-C. The JVM answers both by running shutdown hooks while
 * the command's thread keeps going; the hook installed here asks the command to stop ({@link #onSignal}), waits
 * (bounded) until the command has finished its own cleanup and said so ({@link #close}), and then ends the process
 * with {@link ExitCode#INTERRUPTED}, whichever signal it was, so scripts see one documented code.
 *
 * <p>Use in try-with-resources around everything the command opens, so {@link #close} runs after them. Without a
 * signal, {@link #close} removes the hook and nothing else happens (in-process callers such as tests are unaffected).
 */
final class SignalStop implements AutoCloseable {
    /** How long a signalled command gets to give its work back before the process ends regardless. */
    static final Duration GRACE = Duration.ofSeconds(40);

    private final AtomicBoolean signalled = new AtomicBoolean();
    private final AtomicReference<Runnable> stop = new AtomicReference<>();
    private final CountDownLatch finished = new CountDownLatch(1);
    private final Thread hook;

    private SignalStop() {
        hook = new Thread(this::onShutdown, "vigilo-stop");
    }

    static SignalStop install() {
        SignalStop s = new SignalStop();
        Runtime.getRuntime().addShutdownHook(s.hook);
        return s;
    }

    /** What a signal does: stop claiming and give work back. Runs at once when a signal already arrived. */
    void onSignal(Runnable action) {
        stop.set(action);
        if (signalled.get()) {
            action.run();
        }
    }

    /** Whether SIGTERM or Ctrl-C asked this command to stop. */
    boolean signalled() {
        return signalled.get();
    }

    private void onShutdown() {
        signalled.set(true);
        Runnable action = stop.get();
        if (action != null) {
            action.run();
        }
        try {
            finished.await(GRACE.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        System.out.flush();
        System.err.flush();
        // The command has finished (or overrun its grace): end with the documented code, not 128 + signal.
        Runtime.getRuntime().halt(ExitCode.INTERRUPTED);
    }

    /** The command is done: releases a waiting hook, or removes the hook when no signal came. */
    @Override
    public void close() {
        finished.countDown();
        if (!signalled.get()) {
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException e) {
                // Shutdown began just now: the hook runs, finds the command finished, and ends the process.
            }
        }
    }
}
