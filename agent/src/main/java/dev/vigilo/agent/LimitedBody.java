package dev.vigilo.agent;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Flow;

/**
 * A response body collected into memory up to a limit: one byte more cancels the exchange and fails the body with
 * {@link TooLarge}, so a misbehaving endpoint cannot make a worker buffer without bound.
 */
final class LimitedBody implements HttpResponse.BodySubscriber<byte[]> {
    private final int limit;
    private final CompletableFuture<byte[]> result = new CompletableFuture<>();
    private final ByteArrayOutputStream buffer = new ByteArrayOutputStream();
    private Flow.Subscription subscription;

    LimitedBody(int limit) {
        this.limit = limit;
    }

    /** The body went past the limit. */
    static final class TooLarge extends IOException {
        private static final long serialVersionUID = 1L;

        TooLarge(int limit) {
            super("the answer body is larger than " + Texts.bytes(limit));
        }
    }

    @Override
    public CompletionStage<byte[]> getBody() {
        return result;
    }

    @Override
    public void onSubscribe(Flow.Subscription s) {
        subscription = s;
        s.request(Long.MAX_VALUE);
    }

    @Override
    public void onNext(List<ByteBuffer> items) {
        if (result.isDone()) {
            return;
        }
        for (ByteBuffer b : items) {
            if (buffer.size() + b.remaining() > limit) {
                subscription.cancel();
                result.completeExceptionally(new TooLarge(limit));
                return;
            }
            byte[] chunk = new byte[b.remaining()];
            b.get(chunk);
            buffer.writeBytes(chunk);
        }
    }

    @Override
    public void onError(Throwable t) {
        result.completeExceptionally(t);
    }

    @Override
    public void onComplete() {
        result.complete(buffer.toByteArray());
    }
}
