package dev.vigilo.control;

import dev.vigilo.common.process.ProcessRef;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.Objects;
import java.util.Optional;

/**
 * The {@code clients/} directory: one file per open embedded {@link ControlDatabase} of a live process, named
 * {@code <pid>.<start-millis>.<nonce>} so the host can tell a live client from a dead one (or from a recycled pid)
 * without reading the file. A process that opens the database twice registers twice, so closing one handle does not
 * unregister the other.
 */
final class ClientRegistry {

    private final Path directory;
    private final SecureRandom random = new SecureRandom();

    ClientRegistry(Path directory) {
        this.directory = Objects.requireNonNull(directory, "directory");
    }

    /** Registers {@code client} and returns its file; delete the file to unregister. */
    Path register(ProcessRef client) {
        byte[] nonce = new byte[6];
        random.nextBytes(nonce);
        Path file = directory.resolve(client.pid() + "." + client.startEpochMilli() + "."
                + HexFormat.of().formatHex(nonce));
        // For a human looking at the directory; the host reads only the name.
        String description = "pid=" + client.pid() + "\ncommand="
                + ProcessHandle.current().info().command().orElse("?") + "\n";
        try {
            Files.createDirectories(directory);
            Files.writeString(file, description, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot register in " + directory, e);
        }
        return file;
    }

    /** Deletes the files of clients that are no longer alive and returns how many live ones remain. */
    int pruneAndCountLive() {
        if (!Files.isDirectory(directory)) {
            return 0;
        }
        int live = 0;
        try (DirectoryStream<Path> files = Files.newDirectoryStream(directory)) {
            for (Path file : files) {
                Optional<ProcessRef> client = parse(file.getFileName().toString());
                if (client.isPresent() && client.get().isAlive()) {
                    live++;
                } else {
                    Files.deleteIfExists(file);
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot list " + directory, e);
        }
        return live;
    }

    static Optional<ProcessRef> parse(String name) {
        String[] parts = name.split("\\.", -1);
        if (parts.length != 3) {
            return Optional.empty();
        }
        try {
            return Optional.of(new ProcessRef(Long.parseLong(parts[0]), Long.parseLong(parts[1])));
        } catch (IllegalArgumentException e) {
            return Optional.empty();
        }
    }
}
