package dev.vigilo.control;

import java.nio.file.Path;
import java.util.Objects;

/**
 * Where the embedded server keeps its files under its directory:
 * <pre>
 *   data/              PGDATA
 *   server.lock        serializes joining, starting and stopping the server
 *   server.properties  written by the running host: port, host pid, postmaster pid (absent when not running)
 *   server.log         the host's and PostgreSQL's output
 *   clients/           one file per open ControlDatabase of a live process
 * </pre>
 */
record EmbeddedLayout(Path root) {

    EmbeddedLayout {
        root = Objects.requireNonNull(root, "root").toAbsolutePath().normalize();
    }

    Path dataDirectory() {
        return root.resolve("data");
    }

    Path lockFile() {
        return root.resolve("server.lock");
    }

    Path stateFile() {
        return root.resolve("server.properties");
    }

    Path logFile() {
        return root.resolve("server.log");
    }

    Path clientsDirectory() {
        return root.resolve("clients");
    }
}
