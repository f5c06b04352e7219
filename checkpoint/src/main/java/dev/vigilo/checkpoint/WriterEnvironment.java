package dev.vigilo.checkpoint;

import com.sun.jna.Library;
import com.sun.jna.Native;
import com.sun.jna.Platform;
import dev.vigilo.common.errors.UnavailableException;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Supplier;

/**
 * The S3 settings in this process's environment, which is where Lance 7.0.0's MemWAL writer takes them from.
 *
 * <p>Lance opens a MemWAL shard writer's object store from the dataset URI alone: it ignores the storage options
 * the dataset was opened with and reads every variable of the process environment whose lower-cased name is an
 * object_store S3 key ({@code AWS_ENDPOINT}, {@code AWS_REGION}, {@code AWS_ACCESS_KEY_ID}, ... and also bare
 * {@code ENDPOINT}, {@code REGION}, {@code TOKEN}, ...), falling back to its own AWS credential chain. The JVM has
 * no API that changes its environment, and Lance's native code reads the C library's {@code environ}, so this class
 * sets the variables there with {@code setenv(3)} (through JNA): the endpoint, region, addressing style, HTTP
 * permission and credentials of the log's store, after removing every other variable Lance would read as one of
 * those settings. Java's own view ({@link System#getenv()}, and the environment of processes started with
 * {@link ProcessBuilder}) is a snapshot taken at JVM start and does not change, so pipeline steps never see these
 * variables.
 *
 * <p>The environment is one per process: while a writer of one store holds a {@link Lease}, a writer of a store
 * with other settings cannot start in the same process. This is the class's only state, and it mirrors state the
 * process has anyway.
 */
final class WriterEnvironment {
    /** Lance's own names for the settings Vigilo gives it; the environment names are these upper-cased. */
    private static final List<String> GIVEN = List.of(
            "aws_endpoint",
            "aws_region",
            "allow_http",
            "aws_virtual_hosted_style_request",
            "aws_access_key_id",
            "aws_secret_access_key",
            "aws_session_token");

    /**
     * Every lower-cased name object_store (0.13) maps to one of those settings; a stray one (a user's
     * {@code TOKEN}, an old {@code AWS_ENDPOINT_URL}) would otherwise compete with ours.
     */
    private static final Set<String> ALIASES = Set.of(
            "aws_endpoint_url",
            "aws_endpoint",
            "endpoint_url",
            "endpoint",
            "aws_region",
            "region",
            "aws_default_region",
            "default_region",
            "aws_allow_http",
            "allow_http",
            "aws_virtual_hosted_style_request",
            "virtual_hosted_style_request",
            "aws_access_key_id",
            "access_key_id",
            "aws_secret_access_key",
            "secret_access_key",
            "aws_session_token",
            "aws_token",
            "session_token",
            "token");

    private static final Object LOCK = new Object();
    /** Who holds the environment now, and with which non-secret settings; guarded by {@link #LOCK}. */
    private static String holder;

    private static Map<String, String> holderSettings;
    private static int leases;

    private WriterEnvironment() {}

    /** Keeps the environment set for one writer; {@link #refresh} before each writer (re)open, close at the end. */
    interface Lease extends AutoCloseable {
        /** The lease of a local root: nothing to set. */
        Lease NONE = new Lease() {
            @Override
            public void refresh() {}

            @Override
            public void close() {}
        };

        /** Sets the variables again from freshly computed options (credentials may have been refreshed). */
        void refresh();

        @Override
        void close();
    }

    /**
     * Sets the environment to {@code options} (Lance storage-option names) on behalf of {@code who}.
     *
     * @throws IllegalStateException when a writer of a store with other settings holds the environment
     */
    static Lease acquire(String who, Supplier<Map<String, String>> options) {
        Objects.requireNonNull(who, "who");
        Objects.requireNonNull(options, "options");
        Map<String, String> first = options.get();
        Map<String, String> settings = nonSecret(first);
        synchronized (LOCK) {
            if (leases > 0 && !settings.equals(holderSettings)) {
                throw new IllegalStateException("Lance's MemWAL writer reads S3 settings from the process"
                        + " environment, so one process writes checkpoint logs of one S3 store at a time: " + who
                        + " cannot start while a writer of " + holder + " is open");
            }
            apply(first);
            holder = who;
            holderSettings = settings;
            leases++;
        }
        return new Lease() {
            private boolean closed;

            @Override
            public void refresh() {
                Map<String, String> fresh = options.get();
                synchronized (LOCK) {
                    apply(fresh);
                }
            }

            @Override
            public void close() {
                synchronized (LOCK) {
                    if (!closed) {
                        closed = true;
                        leases--;
                    }
                }
            }
        };
    }

    private static Map<String, String> nonSecret(Map<String, String> options) {
        Map<String, String> copy = new java.util.TreeMap<>(options);
        copy.keySet().removeIf(k -> k.contains("secret") || k.contains("token") || k.contains("key_id"));
        return copy;
    }

    /** Removes every competing variable, then sets the given ones. Callers hold {@link #LOCK}. */
    private static void apply(Map<String, String> options) {
        LibC c = LibC.get();
        Set<String> names = new HashSet<>(System.getenv().keySet());
        GIVEN.forEach(k -> names.add(k.toUpperCase(Locale.ROOT)));
        for (String name : names) {
            if (ALIASES.contains(name.toLowerCase(Locale.ROOT))) {
                c.unsetenv(name);
            }
        }
        for (Map.Entry<String, String> e : options.entrySet()) {
            if (!GIVEN.contains(e.getKey())) {
                throw new IllegalArgumentException("not a setting Vigilo hands Lance: " + e.getKey());
            }
            if (c.setenv(e.getKey().toUpperCase(Locale.ROOT), e.getValue(), 1) != 0) {
                throw new UnavailableException(
                        "cannot set " + e.getKey().toUpperCase(Locale.ROOT)
                                + " in the process environment for Lance's MemWAL writer",
                        null);
            }
        }
    }

    /** The two C library calls, loaded on first use. */
    interface LibC extends Library {
        int setenv(String name, String value, int overwrite);

        int unsetenv(String name);

        static LibC get() {
            return Holder.INSTANCE;
        }

        /** Lazy, thread-safe loading (class initialization). */
        final class Holder {
            static final LibC INSTANCE = load();

            private static LibC load() {
                if (Platform.isWindows()) {
                    throw new UnsupportedOperationException(
                            "checkpoint logs on S3 need setenv(3), which Windows lacks (Lance has no Windows build)");
                }
                // Java takes its snapshot of the environment on first use; take it before the first change.
                System.getenv();
                return Native.load(Platform.C_LIBRARY_NAME, LibC.class);
            }
        }
    }
}
