package dev.vigilo.agent;

import dev.vigilo.llm.ChatCall;
import dev.vigilo.llm.ChatCompletions;
import dev.vigilo.llm.ChatExchange;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;

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
        while (true) {
            CompletableFuture<ChatExchange> future = client.send(call);
            ChatExchange x;
            try {
                x = future.get();
            } catch (InterruptedException e) {
                future.cancel(true);
                throw e;
            } catch (ExecutionException e) {
                if (e.getCause() instanceof RuntimeException refused) {
                    throw refused;
                }
                throw e;
            }
            if (!call.limiter().resend(call)) {
                return x;
            }
        }
    }
}
