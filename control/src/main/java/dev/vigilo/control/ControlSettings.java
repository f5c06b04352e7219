package dev.vigilo.control;

import java.nio.file.Path;
import java.util.Objects;

/**
 * How to reach the control database.
 *
 * <p>The CLI resolves {@code --control-db} / {@code VIGILO_CONTROL_DB} into one of these; this module never reads
 * flags or environment variables itself. Both variants validate their argument on construction and throw
 * {@link NullPointerException} or {@link IllegalArgumentException}; neither touches the network or the file system.
 */
public sealed interface ControlSettings {

    /**
     * An existing PostgreSQL server, reached through a pgjdbc URL such as
     * {@code jdbc:postgresql://db.example:5432/vigilo?user=vigilo&password=secret}.
     * Credentials travel inside the URL (or through the driver's own defaults); {@link #toString()} never shows the
     * password.
     *
     * @param url a URL starting with {@code jdbc:postgresql:}
     */
    record Jdbc(String url) implements ControlSettings {
        public Jdbc {
            Objects.requireNonNull(url, "url");
            if (!url.startsWith("jdbc:postgresql:")) {
                throw new IllegalArgumentException("The control database URL must start with jdbc:postgresql: but was '"
                        + JdbcUrls.redact(url) + "'; check --control-db / VIGILO_CONTROL_DB");
            }
        }

        @Override
        public String toString() {
            return "Jdbc[" + JdbcUrls.redact(url) + "]";
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
