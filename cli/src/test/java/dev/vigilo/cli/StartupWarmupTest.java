package dev.vigilo.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

import java.util.EnumSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

class StartupWarmupTest {
    @Test
    void theJdbiClassItInitializesExists() {
        // If a Jdbi upgrade moves the class, the warm-up silently warms nothing: this test says so.
        assertThatCode(() ->
                        Class.forName(StartupWarmup.JDBI_EVENTS_CLASS, false, StartupWarmupTest.class.getClassLoader()))
                .doesNotThrowAnyException();
    }

    @Test
    void warmsEveryItemOnADaemonThreadThatEnds() throws Exception {
        Thread t = StartupWarmup.start(EnumSet.allOf(StartupWarmup.Item.class));
        assertThat(t.isDaemon()).isTrue();
        assertThat(t.getName()).isEqualTo("vigilo-warmup");
        t.join(60_000);
        assertThat(t.isAlive()).isFalse();
        assertThat(javax.net.ssl.SSLContext.getDefault()).isNotNull();
    }

    @Test
    void nothingToWarmEndsAtOnce() throws Exception {
        Thread t = StartupWarmup.start(Set.of());
        t.join(60_000);
        assertThat(t.isAlive()).isFalse();
    }
}
