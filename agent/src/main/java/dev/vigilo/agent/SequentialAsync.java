package dev.vigilo.agent;

import dev.vigilo.common.concurrent.Futures;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Asynchronous steps run one after another without a thread waiting between them: an evaluator set's evaluators
 * ({@link EvaluatorSet#evaluateAsync}) and a panel's judges ({@link PanelEvaluator#evaluateAsync}). Each step starts
 * when the one before completed, on the thread that completed it (the caller's for the first). Cancelling the chain's
 * future cancels the step in flight; a step that fails, or a {@link Steps} method that throws, fails the chain.
 */
final class SequentialAsync {
    private SequentialAsync() {}

    /**
     * The steps of one chain and what they add up to; called by one step at a time (never concurrently).
     *
     * @param <T> a step's value
     * @param <R> the chain's result
     */
    interface Steps<T, R> {
        /** Starts the next step, or returns null when there is none (the chain completes with {@link #result()}). */
        CompletableFuture<T> next();

        /** Takes the value of the step just completed; false ends the chain now (with {@link #result()}). */
        boolean accept(T value);

        /** The chain's result, once no step follows. */
        R result();
    }

    /** Starts the first step (on the calling thread) and returns the chain's future. */
    static <T, R> CompletableFuture<R> run(Steps<T, R> steps) {
        CompletableFuture<R> out = new CompletableFuture<>();
        AtomicReference<CompletableFuture<T>> inFlight = new AtomicReference<>();
        out.whenComplete((r, t) -> {
            CompletableFuture<T> f = inFlight.get();
            if (out.isCancelled() && f != null) {
                f.cancel(true);
            }
        });
        next(steps, out, inFlight);
        return out;
    }

    private static <T, R> void next(
            Steps<T, R> steps, CompletableFuture<R> out, AtomicReference<CompletableFuture<T>> inFlight) {
        if (out.isDone()) {
            return;
        }
        CompletableFuture<T> f;
        try {
            f = steps.next();
            if (f == null) {
                out.complete(steps.result());
                return;
            }
        } catch (RuntimeException | Error e) {
            out.completeExceptionally(e);
            return;
        }
        inFlight.set(f);
        // Cancelled between the step's start and its publication: the cancel hook above saw no step in flight.
        if (out.isCancelled()) {
            f.cancel(true);
            return;
        }
        f.whenComplete((v, t) -> {
            if (out.isDone()) {
                return;
            }
            if (t != null) {
                out.completeExceptionally(Futures.cause(t));
                return;
            }
            boolean more;
            try {
                more = steps.accept(v);
                if (!more) {
                    out.complete(steps.result());
                    return;
                }
            } catch (RuntimeException | Error e) {
                out.completeExceptionally(e);
                return;
            }
            next(steps, out, inFlight);
        });
    }
}
