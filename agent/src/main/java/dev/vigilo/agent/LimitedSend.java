package dev.vigilo.agent;

import dev.vigilo.common.concurrent.Futures;
import dev.vigilo.llm.ChatCall;
import dev.vigilo.llm.ChatCompletions;
import dev.vigilo.llm.ChatExchange;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicReference;

/**
 * One model call of an attempt through its limiter: sent again, within the same attempt, as long as the limiter
 * {@linkplain dev.vigilo.llm.ChatLimiter#resend takes the failure as its own} (an open circuit: the call waits for
 * the circuit rather than consuming one of the case's attempts).
 */
final class LimitedSend {
    private LimitedSend() {}

    /**
     * The exchange that ended {@code call}; interrupted, the exchange in flight is cancelled.
     *
     * @throws RuntimeException   the limiter's refusal of the call (a run's budget that cannot cover it, a {@code
     *                            CancelledException}): nothing was sent
     * @throws ExecutionException only as a guard: the client completes every other ending normally
     */
    static ChatExchange send(ChatCompletions client, ChatCall call) throws InterruptedException, ExecutionException {
        CompletableFuture<ChatExchange> future = sendAsync(client, call);
        try {
            return future.get();
        } catch (InterruptedException e) {
            future.cancel(true);
            throw e;
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException refused) {
                throw refused;
            }
            throw e;
        }
    }

    /**
     * As {@link #send}, without waiting: the future of the exchange that ended {@code call}, sent again while the
     * limiter takes its failure as its own. Cancelling it cancels the exchange in flight. It fails with the limiter's
     * refusal of the call (nothing was sent).
     */
    static CompletableFuture<ChatExchange> sendAsync(ChatCompletions client, ChatCall call) {
        CompletableFuture<ChatExchange> out = new CompletableFuture<>();
        AtomicReference<CompletableFuture<ChatExchange>> current = new AtomicReference<>();
        out.whenComplete((x, t) -> {
            CompletableFuture<ChatExchange> f = current.get();
            if (out.isCancelled() && f != null) {
                f.cancel(true);
            }
        });
        next(client, call, out, current);
        return out;
    }

    private static void next(
            ChatCompletions client,
            ChatCall call,
            CompletableFuture<ChatExchange> out,
            AtomicReference<CompletableFuture<ChatExchange>> current) {
        if (out.isDone()) {
            return;
        }
        CompletableFuture<ChatExchange> f;
        try {
            f = client.send(call);
        } catch (RuntimeException e) {
            out.completeExceptionally(e);
            return;
        }
        current.set(f);
        if (out.isCancelled()) {
            f.cancel(true);
        }
        f.whenComplete((x, t) -> {
            if (t != null) {
                out.completeExceptionally(Futures.cause(t));
            } else if (call.limiter().resend(call)) {
                next(client, call, out, current);
            } else {
                out.complete(x);
            }
        });
    }
}
