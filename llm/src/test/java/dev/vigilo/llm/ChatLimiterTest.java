package dev.vigilo.llm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** {@link ChatLimiter#all}: the composition of a run's budget and other limits at the one hook. */
class ChatLimiterTest {
    private static final ChatCall CALL = ChatCall.of(
            URI.create("http://127.0.0.1:9/v1/chat/completions"), new byte[0], Optional.empty(), Duration.ofSeconds(1));

    /** Records what it was told; waits {@code wait}, or refuses when {@code refuse}. */
    static final class Recording implements ChatLimiter {
        final Duration wait;
        final boolean refuse;
        final List<String> events = new ArrayList<>();

        Recording(Duration wait, boolean refuse) {
            this.wait = wait;
            this.refuse = refuse;
        }

        @Override
        public Duration reserve(ChatCall call) {
            if (refuse) {
                events.add("refused");
                throw new IllegalStateException("no budget");
            }
            events.add("reserved");
            return wait;
        }

        @Override
        public void settle(ChatCall call, ChatExchange exchange) {
            events.add("settled " + exchange.outcome());
        }
    }

    @Test
    void itWaitsTheLongestWaitAndSettlesEach() {
        Recording a = new Recording(Duration.ofMillis(5), false);
        Recording b = new Recording(Duration.ofMillis(50), false);
        ChatLimiter both = ChatLimiter.all(a, b);
        assertThat(both.reserve(CALL)).isEqualTo(Duration.ofMillis(50));
        both.settle(CALL, ChatExchange.failed(ChatExchange.Outcome.TIMEOUT, null));
        assertThat(a.events).containsExactly("reserved", "settled TIMEOUT");
        assertThat(b.events).containsExactly("reserved", "settled TIMEOUT");
    }

    @Test
    void aRefusalSettlesTheLimitersThatReservedAsCancelledAndIsRethrown() {
        Recording a = new Recording(Duration.ZERO, false);
        Recording b = new Recording(Duration.ZERO, true);
        Recording c = new Recording(Duration.ZERO, false);
        assertThatThrownBy(() -> ChatLimiter.all(a, b, c).reserve(CALL)).hasMessage("no budget");
        assertThat(a.events).containsExactly("reserved", "settled CANCELLED");
        assertThat(b.events).containsExactly("refused");
        assertThat(c.events).isEmpty();
    }
}
