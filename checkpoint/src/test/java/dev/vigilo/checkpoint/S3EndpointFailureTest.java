package dev.vigilo.checkpoint;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vigilo.common.errors.UnavailableException;
import dev.vigilo.storage.S3ProxyFixture;
import dev.vigilo.storage.StallingTcpProxy;
import java.net.ServerSocket;
import java.net.URI;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A checkpoint log on an S3 endpoint that is down fails in bounded time with one line naming the
 * endpoint and the store and saying what to check, instead of waiting on Lance's or the SDK's
 * defaults.
 */
class S3EndpointFailureTest {
    private static S3ProxyFixture s3;

    @BeforeAll
    static void start() {
        s3 = S3ProxyFixture.start(); // publishes the credentials the default chain finds in this JVM
    }

    @AfterAll
    static void stop() {
        s3.close();
    }

    @Test
    void anEndpointThatAcceptsAndNeverAnswersFailsWithinAboutHalfAMinute() throws Exception {
        try (StallingTcpProxy silent = StallingTcpProxy.silent()) {
            LogLocation loc = location(silent.endpoint());
            long start = System.nanoTime();
            assertThatThrownBy(() -> CheckpointLog.openOrCreate(loc).close())
                    .isInstanceOf(UnavailableException.class)
                    .hasMessageContaining("S3 endpoint " + silent.endpoint())
                    .hasMessageContaining("sent no answer")
                    .hasMessageContaining("store \"s3\"")
                    .hasMessageNotContaining("\n");
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(60));
        }
    }

    @Test
    void aClosedPortFailsAtOnce() throws Exception {
        int closedPort;
        try (ServerSocket socket = new ServerSocket(0)) {
            closedPort = socket.getLocalPort();
        }
        URI endpoint = URI.create("http://127.0.0.1:" + closedPort);
        long start = System.nanoTime();
        assertThatThrownBy(() -> CheckpointLog.openOrCreate(location(endpoint)).close())
                .isInstanceOf(UnavailableException.class)
                .hasMessageContaining("cannot connect to S3 endpoint " + endpoint)
                .hasMessageContaining("store \"s3\"");
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(20));
    }

    private static LogLocation location(URI endpoint) {
        return new LogLocation(new LogRoot(S3ProxyFixture.specAt(endpoint, ""), "down"), "pipe", "e");
    }
}
