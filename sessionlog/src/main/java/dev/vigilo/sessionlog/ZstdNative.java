package dev.vigilo.sessionlog;

import com.github.luben.zstd.util.Native;
import dev.vigilo.common.natives.NativeLibraries;

/**
 * Loads zstd-jni's native library before any zstd class is touched. Left to itself, zstd-jni unpacks the library
 * from its jar in a static initializer, and a failure there (a temporary directory that is not writable) escapes as
 * an {@link ExceptionInInitializerError} from deep inside a read, which a reader could mistake for a damaged log.
 * Loading it first, through {@link NativeLibraries}, turns that into an unavailable error (exit 5) before any byte
 * is judged. Cheap once loaded (zstd-jni keeps the flag).
 */
final class ZstdNative {
    private ZstdNative() {}

    /**
     * Makes sure the library is loaded.
     *
     * @throws dev.vigilo.common.errors.UnavailableException when it cannot be unpacked or linked
     */
    static void ensureLoaded() {
        if (!Native.isLoaded()) {
            NativeLibraries.load("zstd-jni's native library", "to read and write .zstd session logs", Native::load);
        }
    }
}
