package dev.vigilo.common.natives;

import dev.vigilo.common.errors.Causes;
import dev.vigilo.common.errors.UnavailableException;
import java.util.Objects;

/**
 * The one way Vigilo loads a native library shipped in a jar (zstd-jni, Lance, Arrow): the library's loader unpacks
 * it into {@code java.io.tmpdir} and links it, and a failure there is an {@link UnavailableException} with one line
 * (exit 5) naming the library, what needs it and the directory, never an {@link ExceptionInInitializerError} that
 * a caller might mistake for a verdict about its data. The {@code vigilo} command points {@code java.io.tmpdir} at
 * a directory it can write before anything loads (docs/configuration.md, "Temporary files and native libraries").
 *
 * <p>Stateless and thread-safe; the loaders themselves make loading happen once per JVM.
 */
public final class NativeLibraries {
    /** The system property naming the directory the loaders unpack into. */
    public static final String DIRECTORY_PROPERTY = "java.io.tmpdir";

    private NativeLibraries() {}

    /**
     * Runs {@code load}, a loader that unpacks and links {@code library}.
     *
     * @param library what messages call the library (e.g. {@code "zstd-jni's native library"})
     * @param purpose what needs it, for the message (e.g. {@code "to read .zstd session logs"})
     * @param load    the loading; it may throw a {@link LinkageError} (the library could not be unpacked or linked)
     *                or, from a loader that wraps one, a runtime exception caused by it
     * @throws UnavailableException when the library cannot be unpacked or linked, in one line
     */
    public static void load(String library, String purpose, Runnable load) {
        Objects.requireNonNull(library, "library");
        Objects.requireNonNull(purpose, "purpose");
        Objects.requireNonNull(load, "load");
        try {
            load.run();
        } catch (LinkageError e) {
            throw failure(library, purpose, e);
        } catch (RuntimeException e) {
            if (hasLinkageCause(e)) {
                throw failure(library, purpose, e);
            }
            throw e;
        }
    }

    private static UnavailableException failure(String library, String purpose, Throwable e) {
        String directory = System.getProperty(DIRECTORY_PROPERTY);
        return new UnavailableException(
                "cannot load " + library + " (needed " + purpose
                        + ") from " + directory + ": " + reason(e) + "; make that directory writable (and not mounted"
                        + " noexec), or point java.io.tmpdir at one that is (VIGILO_JAVA_OPTS=-Djava.io.tmpdir=DIR)",
                e);
    }

    private static boolean hasLinkageCause(Throwable e) {
        return Causes.chain(e).stream().skip(1).anyMatch(LinkageError.class::isInstance);
    }

    /** The innermost message, on one line: the loaders wrap the I/O error that says what went wrong. */
    private static String reason(Throwable e) {
        return Causes.rootMessage(e);
    }
}
