package dev.vigilo.control;

import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.common.errors.Secrets;
import dev.vigilo.common.input.Names;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.util.Objects;
import java.util.Optional;
import java.util.Properties;
import java.util.regex.Pattern;

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
        private static final Pattern HOST_NAME = Pattern.compile("[A-Za-z0-9._-]+");
        private static final Pattern IPV6 = Pattern.compile("[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*");

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
            Properties parsed = org.postgresql.Driver.parseURL(url, null);
            if (parsed == null || hasUserInfo(url)) {
                throw new InvalidInputException("The control database URL '" + Secrets.mask(url)
                        + "' is malformed: expected " + EXPECTED
                        + " (credentials go in the user and password parameters, not before the host)"
                        + "; check --control-db / VIGILO_CONTROL_DB");
            }
            // The driver takes any text for a host, so a malformed one ([::1, [zz::1], a space) would otherwise
            // be reported as an unreachable server.
            for (String host : parsed.getProperty("PGHOST", "").split(",", -1)) {
                if (!validHost(host)) {
                    throw new InvalidInputException("The control database URL '" + Secrets.mask(url)
                            + "' has a malformed host "
                            + Names.quote(shownHost(url, host))
                            + ": use a host name (letters, digits, '.', '-', '_'), an IPv4 address or an IPv6 address"
                            + " in brackets such as [::1]; check --control-db / VIGILO_CONTROL_DB");
                }
            }
        }

        /** A host name, an IPv4 address, or a bracketed IPv6 literal (with an optional zone); empty: the default. */
        private static boolean validHost(String host) {
            if (!host.startsWith("[")) {
                return HOST_NAME.matcher(host).matches() || host.isEmpty();
            }
            if (host.length() < 3 || !host.endsWith("]")) {
                return false;
            }
            String literal = host.substring(1, host.length() - 1);
            int zone = literal.indexOf('%');
            String address = zone < 0 ? literal : literal.substring(0, zone);
            if (!IPV6.matcher(address).matches()) {
                return false;
            }
            try {
                // Bracketed, the JDK parses it as an IPv6 literal and never looks it up.
                InetAddress.getByName("[" + address + "]");
                return true;
            } catch (UnknownHostException e) {
                return false;
            }
        }

        /**
         * The hosts and ports as written ({@code [::1}), which say more than what the driver made of them
         * ({@code [:}); empty for a URL without {@code //}.
         */
        private static Optional<String> authority(String url) {
            String rest = url.substring("jdbc:postgresql:".length());
            if (!rest.startsWith("//")) {
                return Optional.empty();
            }
            int end = rest.length();
            for (char c : new char[] {'/', '?'}) {
                int at = rest.indexOf(c, 2);
                if (at >= 0 && at < end) {
                    end = at;
                }
            }
            return Optional.of(rest.substring(2, end));
        }

        /** The hosts as written unless a {@code host=} parameter gave them, else what the driver parsed. */
        private static String shownHost(String url, String parsed) {
            return url.contains("host=") ? parsed : authority(url).orElse(parsed);
        }

        /** {@code //user[:password]@host}: the driver would take it all for a host name. */
        private static boolean hasUserInfo(String url) {
            return authority(url).map(a -> a.contains("@")).orElse(false);
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
