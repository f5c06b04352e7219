package dev.vigilo.llm;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Flow;

/**
 * A response body collected into memory up to a limit, so a misbehaving endpoint cannot make a process buffer
 * without bound: past the limit it either cancels the exchange at once ({@link HttpOptions.Oversized#ABORT}) or
 * reads on to count the rest without keeping it ({@code DRAIN}); either way the body fails with {@link TooLarge}.
 */
final class LimitedBody implements HttpResponse.BodySubscriber<byte[]> {
    private final HttpResponse.ResponseInfo info;
    private final int limit;
    private final HttpOptions.Oversized mode;
    private final CompletableFuture<byte[]> result = new CompletableFuture<>();
    private final ByteArrayOutputStream buffer = new ByteArrayOutputStream();
    private long size;
    private Flow.Subscription subscription;

    LimitedBody(HttpResponse.ResponseInfo info, int limit, HttpOptions.Oversized mode) {
        this.info = info;
        this.limit = limit;
        this.mode = mode;
    }

    /** The body went past the limit: the response's status and Retry-After, the kept prefix and the size seen. */
    static final class TooLarge extends IOException {
        private static final long serialVersionUID = 1L;
        final int status;
        final transient Optional<String> retryAfter;
        final transient byte[] prefix;
        final long size;

        TooLarge(int status, Optional<String> retryAfter, byte[] prefix, long size, int limit) {
            super("the answer body is larger than " + limit + " bytes");
            this.status = status;
            this.retryAfter = retryAfter;
            this.prefix = prefix;
            this.size = size;
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
            int n = b.remaining();
            size += n;
            if (size > limit) {
                if (mode == HttpOptions.Oversized.ABORT) {
                    subscription.cancel();
                    result.completeExceptionally(tooLarge());
                    return;
                }
                // Draining: counted, not kept.
                b.position(b.limit());
                continue;
            }
            byte[] chunk = new byte[n];
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
        if (size > limit) {
            result.completeExceptionally(tooLarge());
        } else {
            result.complete(buffer.toByteArray());
        }
    }

    private TooLarge tooLarge() {
        return new TooLarge(
                info.statusCode(), info.headers().firstValue("Retry-After"), buffer.toByteArray(), size, limit);
    }
}
