package dev.vigilo.checkpoint;

import dev.vigilo.common.natives.NativeLibraries;
import java.nio.file.Path;

/**
 * Loads Lance's and Arrow's native libraries once per JVM, before the first use of Lance, through
 * {@link NativeLibraryCopies}: their copies in {@code java.io.tmpdir} are unpacked under a lock, removed once
 * loaded, and copies left by killed processes are reclaimed.
 */
final class LanceRuntime {
    private LanceRuntime() {}

    /**
     * Makes sure the libraries are loaded; cheap after the first call.
     *
     * @throws dev.vigilo.common.errors.UnavailableException when they cannot be unpacked or linked (for example a
     *     {@code java.io.tmpdir} that cannot be written), in one line, on this and every later call
     */
    static void prepare() {
        NativeLibraries.load("the native libraries of Lance and Arrow", "to open checkpoint logs", Loaded::ensure);
    }

    // Class initialization runs the loading exactly once per JVM, and later callers wait for it.
    private static final class Loaded {
        static {
            new NativeLibraryCopies(Path.of(System.getProperty("java.io.tmpdir"))).loadUnderLock(Loaded::load);
        }

        static void ensure() {}

        private static void load() {
            try {
                // org.lance.JniLoader's static initializer unpacks and loads liblance_jni.
                Class.forName("org.lance.JniLoader", true, LanceRuntime.class.getClassLoader());
            } catch (ClassNotFoundException e) {
                throw new IllegalStateException("lance-core is not on the class path", e);
            }
            // Lance hands data over through Arrow's C data interface, whose JniLoader unpacks arrow_cdata_jni.
            org.apache.arrow.c.jni.JniLoader.get().ensureLoaded();
        }
    }
}
