package dev.vigilo.llm;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** A closed client leaves no selector thread in native code for the JVM's exit to wait for. */
class SelectorThreadTest {
    @Test
    void findsAndEndsTheSelectorThreadOfAJdkClient() throws Exception {
        HttpClient client = HttpClient.newHttpClient();
        Thread thread = SelectorThread.find(client).orElseThrow();
        assertThat(thread.getName()).matches("HttpClient-\\d+-SelectorManager");
        assertThat(thread.isAlive()).isTrue();

        assertThat(SelectorThread.stop(client, Duration.ofSeconds(10))).isTrue();
        assertThat(thread.isAlive()).isFalse();
        assertThat(SelectorThread.find(client)).isEmpty();
        // A second stop finds nothing to do.
        assertThat(SelectorThread.stop(client, Duration.ofSeconds(10))).isFalse();
    }

    @Test
    void closingAChatClientEndsItsSelectorThread() throws Exception {
        Set<Thread> before = selectorThreads();
        ChatCompletions client = ChatCompletions.http(
                new HttpOptions(Duration.ofSeconds(5), 1024, HttpOptions.Oversized.ABORT, "selector-test"));
        String answer = "{\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"ok\"},"
                + "\"finish_reason\":\"stop\"}]}";
        try (TestEndpoint ep = new TestEndpoint(x -> TestEndpoint.reply(x, 200, answer))) {
            ChatExchange x = client.send(ChatCall.of(
                            ep.uri(),
                            "{\"model\":\"m\"}".getBytes(StandardCharsets.UTF_8),
                            Optional.empty(),
                            Duration.ofSeconds(5)))
                    .get(30, TimeUnit.SECONDS);
            assertThat(x.outcome()).isEqualTo(ChatExchange.Outcome.ANSWERED);
        }
        Set<Thread> mine = selectorThreads();
        mine.removeAll(before);
        assertThat(mine).as("the client's selector thread").hasSize(1);

        client.close();

        Thread selector = mine.iterator().next();
        assertThat(selector.isAlive()).as("%s after close", selector.getName()).isFalse();
    }

    private static Set<Thread> selectorThreads() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().matches("HttpClient-\\d+-SelectorManager"))
                .collect(Collectors.toSet());
    }
}
