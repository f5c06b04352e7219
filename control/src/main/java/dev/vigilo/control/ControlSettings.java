package dev.vigilo.control;

import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.common.errors.Secrets;
import java.nio.file.Path;
import java.util.Objects;

/**
 * How to reach the control database.
 *
 * <p>The CLI resolves {@code --control-db} / {@code VIGILO_CONTROL_DB} into one of these; this module never reads
 * flags or environment variables itself. Both variants validate their argument on construction (a null argument is
 * a {@link NullPointerException}, a malformed URL an {@link InvalidInputException} whose message masks credentials);
 * neither touches the network or the file system.
 */
public sealed interface ControlSettings {

    /**
     * An existing PostgreSQL server, reached through a pgjdbc URL such as
     * {@code jdbc:postgresql://db.example:5432/vigilo?user=vigilo&password=secret}.
     * Credentials travel inside the URL (or through the driver's own defaults); {@link #toString()} never shows the
     * password.
     *
     * @param url a URL starting with {@code jdbc:postgresql:} that the PostgreSQL driver can parse
     */
    record Jdbc(String url) implements ControlSettings {
        /** The form the messages ask for. */
        static final String EXPECTED = "jdbc:postgresql://HOST[:PORT]/DATABASE?user=USER&password=PASSWORD";

        public Jdbc {
            Objects.requireNonNull(url, "url");
            if (!url.startsWith("jdbc:postgresql:")) {
                throw new InvalidInputException("The control database URL '" + Secrets.mask(url)
                        + "' is not a PostgreSQL JDBC URL: expected " + EXPECTED
                        + "; check --control-db / VIGILO_CONTROL_DB");
            }
            // The driver's own parser: user:password@host (which it does not support) and bad ports fail here,
            // before any connection attempt, rather than as an unreachable server.
            if (org.postgresql.Driver.parseURL(url, null) == null || hasUserInfo(url)) {
                throw new InvalidInputException("The control database URL '" + Secrets.mask(url)
                        + "' is malformed: expected " + EXPECTED
                        + " (credentials go in the user and password parameters, not before the host)"
                        + "; check --control-db / VIGILO_CONTROL_DB");
            }
        }

        /** {@code //user[:password]@host}: the driver would take it all for a host name. */
        private static boolean hasUserInfo(String url) {
            String rest = url.substring("jdbc:postgresql:".length());
            if (!rest.startsWith("//")) {
                return false;
            }
            int end = rest.length();
            for (char c : new char[] {'/', '?'}) {
                int at = rest.indexOf(c, 2);
                if (at >= 0 && at < end) {
                    end = at;
                }
            }
            return rest.substring(2, end).contains("@");
        }

        @Override
        public String toString() {
            return "Jdbc[" + Secrets.mask(url) + "]";
        }
    }

    /**
     * The embedded PostgreSQL server kept in {@code directory} (the CLI passes {@code <VIGILO_HOME>/postgres}). The
     * server is started on first use and shared by every Vigilo process on this machine that names the same
     * directory; it stops by itself a short while after the last of them has finished.
     *
     * @param directory where the server keeps its data, lock, state and log; made absolute and normalized
     */
    record Embedded(Path directory) implements ControlSettings {
        public Embedded {
            directory = Objects.requireNonNull(directory, "directory")
                    .toAbsolutePath()
                    .normalize();
        }
    }
}
