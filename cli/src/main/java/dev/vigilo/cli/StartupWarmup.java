package dev.vigilo.cli;

import dev.vigilo.common.concurrent.Threads;
import java.security.NoSuchAlgorithmException;
import java.util.EnumSet;
import java.util.Set;
import javax.net.ssl.SSLContext;

/**
 * Initializes, on a daemon thread, process-wide library state that a command needs later and that takes a noticeable
 * while to set up the first time (docs/configuration.md, "Start-up"), so that it overlaps the command's own start
 * (joining the embedded server, reading a dataset) on another core instead of adding to it. Each item is a singleton
 * whose initialization is thread-safe (class initialization, a synchronized factory), so the command's thread either
 * finds it done or waits for the warm-up's initialization rather than repeating it. A failure here is ignored: the
 * command meets it again where it needs the item, and reports it there.
 */
final class StartupWarmup {
    /** What can be warmed. */
    enum Item {
        /**
         * Jdbi registers its statement event with the JDK Flight Recorder the first time a statement runs (about 0.25
         * s: the recorder's metadata), in every command that reads or writes the database.
         */
        JDBI_STATEMENT_EVENTS,
        /**
         * The JDK HTTP client builds the default TLS context and its default parameters when a client is made (about
         * 0.3 s: the trust store's certificates, the handshake classes), even for plain http endpoints: the worker's
         * first chunk makes its agent's client.
         */
        TLS_CONTEXT
    }

    /** The class whose initialization does Jdbi's registration (internal to Jdbi: if it moves, nothing is warmed). */
    static final String JDBI_EVENTS_CLASS = "org.jdbi.v3.core.statement.internal.JfrSupport";

    private StartupWarmup() {}

    /** Starts warming {@code items} on a daemon thread; returns it (for tests). */
    static Thread start(Set<Item> items) {
        Set<Item> copy = items.isEmpty() ? EnumSet.noneOf(Item.class) : EnumSet.copyOf(items);
        return Threads.startDaemon("warmup", () -> {
            for (Item item : copy) {
                warm(item);
            }
        });
    }

    private static void warm(Item item) {
        try {
            switch (item) {
                case JDBI_STATEMENT_EVENTS ->
                    Class.forName(JDBI_EVENTS_CLASS, true, StartupWarmup.class.getClassLoader());
                // the client asks the context for its default parameters, which makes an engine (the handshake
                // classes) the first time
                case TLS_CONTEXT -> SSLContext.getDefault().getDefaultSSLParameters();
            }
        } catch (ClassNotFoundException | NoSuchAlgorithmException | RuntimeException | LinkageError e) {
            // Ignored on purpose (see the class comment).
        }
    }
}
