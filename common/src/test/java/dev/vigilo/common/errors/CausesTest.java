package dev.vigilo.common.errors;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ConnectException;
import org.junit.jupiter.api.Test;

class CausesTest {
    @Test
    void theRootMessageIsTheInnermostMessageOnOneLine() {
        Exception e = new IllegalStateException(
                "wrapper", new UncheckedIOException(new IOException("ERROR: relation missing\n  Detail: more ")));
        assertThat(Causes.rootMessage(e)).isEqualTo("ERROR: relation missing Detail: more");
    }

    @Test
    void aRootWithoutMessageGivesTheInnermostMessageAbove() {
        Exception e = new IllegalStateException("cannot connect to 127.0.0.1:5432", new ConnectException());
        assertThat(Causes.rootMessage(e)).isEqualTo("cannot connect to 127.0.0.1:5432");
        assertThat(Causes.rootMessage(new RuntimeException(new ConnectException())))
                .contains("ConnectException");
        assertThat(Causes.rootMessage(new ConnectException())).isEqualTo("ConnectException");
    }

    @Test
    void theRootMessageIsMasked() {
        Exception e = new RuntimeException(new IOException("cannot open postgresql://vigilo:hunter2@db/vigilo"));
        assertThat(Causes.rootMessage(e)).doesNotContain("hunter2");
    }

    @Test
    void aLoopingChainEnds() {
        IllegalStateException a = new IllegalStateException("a");
        IllegalStateException b = new IllegalStateException("b", a);
        a.initCause(b);
        assertThat(Causes.chain(a)).containsExactly(a, b);
        assertThat(Causes.find(a, IOException.class)).isEmpty();
        assertThat(Causes.find(new RuntimeException(new ConnectException("x")), IOException.class))
                .get()
                .isInstanceOf(ConnectException.class);
    }
}
