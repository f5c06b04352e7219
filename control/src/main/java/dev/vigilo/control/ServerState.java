package dev.vigilo.control;

import dev.vigilo.common.io.AtomicFiles;
import dev.vigilo.common.process.ProcessRef;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Objects;
import java.util.Optional;
import java.util.Properties;

/**
 * What a running server host publishes in {@code server.properties}: how to reach PostgreSQL and which processes
 * serve it. The file exists exactly while a host is serving; it is written atomically, so readers never see a
 * partial file.
 *
 * @param token        chosen by the client that launched the host, so that client recognizes its host's file
 * @param port         the TCP port PostgreSQL listens on (loopback)
 * @param host         the server-host JVM
 * @param postmasterPid the PostgreSQL postmaster's pid
 */
record ServerState(String token, int port, ProcessRef host, long postmasterPid) {

    ServerState {
        Objects.requireNonNull(token, "token");
        Objects.requireNonNull(host, "host");
        if (port <= 0 || port > 65_535) {
            throw new IllegalArgumentException("port out of range: " + port);
        }
    }

    /** Writes the state to {@code file} crash-safely ({@link AtomicFiles#replace}: temporary file, fsync, rename). */
    void writeTo(Path file) {
        Properties properties = new Properties();
        properties.setProperty("token", token);
        properties.setProperty("port", Integer.toString(port));
        properties.setProperty("hostPid", Long.toString(host.pid()));
        properties.setProperty("hostStart", Long.toString(host.startEpochMilli()));
        properties.setProperty("postmasterPid", Long.toString(postmasterPid));
        ByteArrayOutputStream content = new ByteArrayOutputStream();
        try {
            properties.store(content, "Vigilo embedded PostgreSQL; written by the server host, do not edit");
            AtomicFiles.replace(file, content.toByteArray());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + file, e);
        }
    }

    /**
     * @return the state in {@code file}, or empty if there is none; a file that cannot be parsed counts as none
     *         (only a host that crashed mid-way could leave one, and it is then overwritten)
     */
    static Optional<ServerState> readFrom(Path file) {
        Properties properties = new Properties();
        try (InputStream in = Files.newInputStream(file)) {
            properties.load(in);
        } catch (NoSuchFileException e) {
            return Optional.empty();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file, e);
        }
        try {
            return Optional.of(new ServerState(
                    Objects.requireNonNull(properties.getProperty("token")),
                    Integer.parseInt(properties.getProperty("port")),
                    new ProcessRef(
                            Long.parseLong(properties.getProperty("hostPid")),
                            Long.parseLong(properties.getProperty("hostStart"))),
                    Long.parseLong(properties.getProperty("postmasterPid"))));
        } catch (RuntimeException e) {
            return Optional.empty();
        }
    }

    /** Deletes {@code file} if it still holds the state published under {@code token}. */
    static void deleteIfOwned(Path file, String token) {
        if (readFrom(file).map(state -> state.token().equals(token)).orElse(false)) {
            try {
                Files.deleteIfExists(file);
            } catch (IOException e) {
                throw new UncheckedIOException("cannot delete " + file, e);
            }
        }
    }
}
