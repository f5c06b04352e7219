package dev.vigilo.common.natives;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vigilo.common.errors.UnavailableException;
import java.io.IOException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class NativeLibrariesTest {
    @Test
    void aLoaderThatWorksRunsOnce() {
        AtomicInteger runs = new AtomicInteger();
        NativeLibraries.load("x's native library", "to test", runs::incrementAndGet);
        assertThat(runs).hasValue(1);
    }

    @Test
    void anUnpackFailureIsOneLineOfUnavailability() {
        String tmp = System.getProperty(NativeLibraries.DIRECTORY_PROPERTY);
        assertThatThrownBy(() -> NativeLibraries.load("zstd-jni's native library", "to read logs", () -> {
                    throw new ExceptionInInitializerError("Cannot unpack libzstd-jni: Not a directory");
                }))
                .isInstanceOf(UnavailableException.class)
                .hasMessage("cannot load zstd-jni's native library (needed to read logs) from " + tmp
                        + ": Cannot unpack libzstd-jni: Not a directory; make that directory writable (and not"
                        + " mounted noexec), or point java.io.tmpdir at one that is"
                        + " (VIGILO_JAVA_OPTS=-Djava.io.tmpdir=DIR)");
    }

    @Test
    void theInnermostReasonOfAWrappedFailureIsShown() {
        Error wrapped = new ExceptionInInitializerError(
                new IllegalStateException("cannot unpack null", new IOException("No space\nleft on device")));
        assertThatThrownBy(() -> NativeLibraries.load("Lance", "to open logs", () -> {
                    throw wrapped;
                }))
                .isInstanceOf(UnavailableException.class)
                .hasMessageContaining("from ")
                .hasMessageContaining(": No space left on device; make that directory writable")
                .hasCause(wrapped);
        RuntimeException carrier = new IllegalStateException("load failed", new UnsatisfiedLinkError("noexec"));
        assertThatThrownBy(() -> NativeLibraries.load("Lance", "to open logs", () -> {
                    throw carrier;
                }))
                .isInstanceOf(UnavailableException.class)
                .hasMessageContaining(": noexec; ");
    }

    @Test
    void otherFailuresAreNotDisguised() {
        IllegalArgumentException bug = new IllegalArgumentException("a bug");
        assertThatThrownBy(() -> NativeLibraries.load("x", "to test", () -> {
                    throw bug;
                }))
                .isSameAs(bug);
    }
}
