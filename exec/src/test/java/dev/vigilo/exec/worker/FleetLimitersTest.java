package dev.vigilo.exec.worker;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.vigilo.agent.EndpointLimiters;
import dev.vigilo.exec.ExecFixture;
import dev.vigilo.exec.ExecutionConfig;
import dev.vigilo.exec.ExecutionStatus;
import dev.vigilo.exec.Placements;
import dev.vigilo.exec.view.ExecutionStatusReader;
import dev.vigilo.llm.ChatCall;
import dev.vigilo.llm.ChatExchange;
import dev.vigilo.llm.ChatLimiter;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two processes' fleet limiters (two {@link FleetLimiters} with their own holder ids and lease threads) on one
 * control database: the in-flight bound holds across both, both get permits, the run's status shows the limiter,
 * and an endpoint without limits gets none.
 */
class FleetLimitersTest {
    static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    private static ChatCall call(URI url) {
        return new ChatCall(url, new byte[8], Map.of(), Optional.empty(), Duration.ofSeconds(5), 2, ChatLimiter.NONE);
    }

    private static ChatExchange answered() {
        return new ChatExchange(
                ChatExchange.Outcome.ANSWERED,
                200,
                Optional.empty(),
                new byte[0],
                0,
                Optional.of(JSON.createObjectNode()),
                Optional.empty());
    }

    @Test
    void twoProcessesShareTheInFlightBoundAndThePermitsAndStatusShowsTheLimiter() throws Exception {
        try (ExecFixture fx = new ExecFixture(dir, 10);
                Placements placements = Placements.open(fx.control, ExecutionConfig.defaults())) {
            UUID run = fx.prepare();
            URI url = URI.create("http://127.0.0.1:9/v1/chat/completions");
            ObjectNode settings = JSON.createObjectNode();
            settings.putObject("rate_limit").put("requests_per_minute", 6000).put("max_in_flight", 3);
            EndpointLimiters.Endpoint endpoint =
                    new EndpointLimiters.Endpoint("agent", url, "m", Optional.of("KEY_VAR"), settings);
            List<Worker.LimiterReading> readings = new CopyOnWriteArrayList<>();
            try (FleetLimiters p1 = new FleetLimiters(fx.control.jdbi(), UUID.randomUUID(), readings::add);
                    FleetLimiters p2 = new FleetLimiters(fx.control.jdbi(), UUID.randomUUID(), r -> {})) {
                ChatLimiter l1 = p1.forRun(run).limiter(endpoint);
                ChatLimiter l2 = p2.forRun(run).limiter(endpoint);
                assertThat(p1.forRun(run)
                                .limiter(new EndpointLimiters.Endpoint(
                                        "evaluators.j", url, "m", Optional.empty(), JSON.createObjectNode())))
                        .isSameAs(ChatLimiter.NONE);
                // Six calls ask, three on each process: at most three are in flight at once, fleet-wide.
                List<ChatCall> calls1 = new ArrayList<>();
                List<ChatCall> calls2 = new ArrayList<>();
                for (int i = 0; i < 3; i++) {
                    calls1.add(call(url));
                    calls2.add(call(url));
                }
                AtomicInteger admitted = new AtomicInteger();
                List<ChatCall> inFlight = new ArrayList<>();
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                while (admitted.get() < 3) {
                    for (int i = 0; i < 3; i++) {
                        for (var pair : List.of(Map.entry(l1, calls1.get(i)), Map.entry(l2, calls2.get(i)))) {
                            if (!inFlight.contains(pair.getValue())
                                    && pair.getKey().admit(pair.getValue()).isZero()) {
                                inFlight.add(pair.getValue());
                                admitted.incrementAndGet();
                            }
                        }
                    }
                    assertThat(System.nanoTime() - deadline)
                            .as("three calls admitted")
                            .isNegative();
                    Thread.sleep(10);
                }
                // Another lease round of both processes: still no fourth call while three are in flight.
                long settle = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(1500);
                while (System.nanoTime() < settle) {
                    for (int i = 0; i < 3; i++) {
                        if (!inFlight.contains(calls1.get(i))) {
                            assertThat(l1.admit(calls1.get(i))).isPositive();
                        }
                        if (!inFlight.contains(calls2.get(i))) {
                            assertThat(l2.admit(calls2.get(i))).isPositive();
                        }
                    }
                    Thread.sleep(50);
                }
                // One call ends: its slot goes to a waiting call (on either process) after the next leases.
                ChatCall done = inFlight.remove(0);
                (calls1.contains(done) ? l1 : l2).settle(done, answered());
                long again = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                boolean next = false;
                while (!next) {
                    for (int i = 0; i < 3 && !next; i++) {
                        ChatCall c1 = calls1.get(i);
                        ChatCall c2 = calls2.get(i);
                        if (c1 != done && !inFlight.contains(c1) && l1.admit(c1).isZero()) {
                            next = true;
                        } else if (c2 != done
                                && !inFlight.contains(c2)
                                && l2.admit(c2).isZero()) {
                            next = true;
                        }
                    }
                    assertThat(System.nanoTime() - again)
                            .as("a freed slot is taken")
                            .isNegative();
                    Thread.sleep(10);
                }
            }
            assertThat(readings).isNotEmpty();
            assertThat(readings.get(readings.size() - 1).endpoint())
                    .isEqualTo("http://127.0.0.1:9/v1/chat/completions model m key $KEY_VAR");
            ExecutionStatus status = new ExecutionStatusReader(placements).status(run);
            assertThat(status.limiters()).hasSize(1);
            ExecutionStatus.Limiter l = status.limiters().get(0);
            assertThat(l.at()).isEqualTo("agent");
            assertThat(l.requestsPerMinute()).isEqualTo(6000);
            assertThat(l.maxInFlight()).isEqualTo(3);
            assertThat(l.circuit()).isEqualTo("closed");
            assertThat(l.line())
                    .isEqualTo("agent (http://127.0.0.1:9/v1/chat/completions model m key $KEY_VAR): 6000 of 6000"
                            + " requests/min, at most 3 in flight since "
                            + l.rateChangedAt().truncatedTo(java.time.temporal.ChronoUnit.SECONDS)
                            + " (configured); circuit closed");
            assertThat(status.toJson()).contains("\"limiters\":[{\"at\":\"agent\"");
        }
    }
}
