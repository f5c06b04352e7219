package dev.vigilo.cli;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import org.slf4j.LoggerFactory;
import org.slf4j.bridge.SLF4JBridgeHandler;

/**
 * Logging is quiet by default: Vigilo's own warnings go to stderr, libraries say nothing (a failing connection pool or
 * driver would otherwise print pages of warnings and stack traces; what they report reaches the user as the one-line
 * error). {@code --verbose} turns on Vigilo's info and debug messages and the libraries' info and above.
 * java.util.logging is routed to SLF4J so every library logs through one backend.
 *
 * <p>The quiet levels are those of {@code logback.xml}, so a quiet command whose code never logs does not start
 * logback at all (its configuration is a good part of a short command's start-up): it only stops
 * java.util.logging's console output, which the quiet levels would drop anyway, and logback configures itself from
 * {@code logback.xml} when something first logs.
 */
final class Logging {
    private Logging() {}

    static void configure(boolean verbose) {
        if (!verbose && !SLF4JBridgeHandler.isInstalled()) {
            java.util.logging.Logger root =
                    java.util.logging.LogManager.getLogManager().getLogger("");
            for (java.util.logging.Handler handler : root.getHandlers()) {
                root.removeHandler(handler);
            }
            return;
        }
        if (!SLF4JBridgeHandler.isInstalled()) {
            SLF4JBridgeHandler.removeHandlersForRootLogger();
            SLF4JBridgeHandler.install();
        }
        if (LoggerFactory.getILoggerFactory() instanceof LoggerContext context) {
            context.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME).setLevel(verbose ? Level.INFO : Level.OFF);
            context.getLogger("dev.vigilo").setLevel(verbose ? Level.DEBUG : Level.WARN);
        }
    }
}
