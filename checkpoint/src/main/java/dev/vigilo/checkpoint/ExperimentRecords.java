package dev.vigilo.checkpoint;

import dev.vigilo.common.errors.DamagedException;
import dev.vigilo.common.errors.UnavailableException;
import dev.vigilo.common.io.AtomicFiles;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import java.util.regex.Pattern;

/**
 * Small JSON records beside an experiment's log, changed only by compare-and-set, for coordination that must be
 * durable and shared by every process of the experiment (for example which process owns which items). A record is
 * {@code <experiment>/<dir>/<name>.json}; every write names the version it replaces, so of two concurrent writers of
 * one record exactly one wins. On S3 the version is the object's ETag and writes are conditional PUTs (the
 * mechanism of the maintenance lease); on a local root the version is a random id stored in the file's first line
 * and a write happens under an exclusive OS lock on {@code <dir>/.lock}, replacing the file by an atomic move.
 * Records are never deleted. Thread-safe.
 */
public interface ExperimentRecords extends AutoCloseable {
    /** A record's JSON text and the version it was read at. */
    record Versioned(String json, String version) {}

    /** The record {@code name}, empty if it was never written. */
    Optional<Versioned> read(String name);

    /**
     * Writes {@code json} as record {@code name} if its current version is {@code expectedVersion} (null: if it was
     * never written); returns the new version, empty if the record changed meanwhile (nothing was written).
     */
    Optional<String> write(String name, String expectedVersion, String json);

    @Override
    void close();

    /** Record names: 1-64 of {@code [a-z0-9._-]}, not starting with a dot. */
    Pattern NAME = Pattern.compile("[a-z0-9_-][a-z0-9._-]{0,63}");

    /** The records in {@code dir} of {@code loc}'s experiment. */
    static ExperimentRecords open(LogLocation loc, String dir) {
        check(dir);
        if (loc.isLocal()) {
            return new Local(loc.experimentDir().resolve(dir));
        }
        dev.vigilo.storage.StoreSpec.S3 store = loc.root().s3Store();
        return new S3(
                new S3Conditional(dev.vigilo.storage.S3Clients.open(store), store, "experiment record"),
                loc.experimentKey() + "/" + dir,
                true);
    }

    private static String check(String name) {
        Objects.requireNonNull(name, "name");
        if (!NAME.matcher(name).matches()) {
            throw new IllegalArgumentException("invalid record name: " + name);
        }
        return name;
    }

    /** Records in a local directory. */
    final class Local implements ExperimentRecords {
        private final Path dir;

        Local(Path dir) {
            this.dir = dir;
        }

        @Override
        public Optional<Versioned> read(String name) {
            Path f = dir.resolve(check(name) + ".json");
            String text;
            try {
                text = Files.readString(f, StandardCharsets.UTF_8);
            } catch (NoSuchFileException e) {
                return Optional.empty();
            } catch (IOException e) {
                throw new UnavailableException("cannot read " + f + ": " + e.getMessage(), e);
            }
            int nl = text.indexOf('\n');
            if (nl <= 0) {
                throw new DamagedException(f + " is not an experiment record (no version line)");
            }
            return Optional.of(new Versioned(text.substring(nl + 1), text.substring(0, nl)));
        }

        @Override
        public Optional<String> write(String name, String expectedVersion, String json) {
            Objects.requireNonNull(json, "json");
            Path f = dir.resolve(check(name) + ".json");
            try {
                Files.createDirectories(dir);
                try (FileChannel ch = FileChannel.open(
                                dir.resolve(".lock"), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
                        FileLock ignored = lock(ch)) {
                    String current = read(name).map(Versioned::version).orElse(null);
                    if (!Objects.equals(current, expectedVersion)) {
                        return Optional.empty();
                    }
                    String version = UUID.randomUUID().toString();
                    AtomicFiles.replace(
                            f, (version + "\n" + json).getBytes(StandardCharsets.UTF_8), "checkpoint.record");
                    return Optional.of(version);
                }
            } catch (IOException e) {
                throw new UnavailableException("cannot write " + f + ": " + e.getMessage(), e);
            }
        }

        /** The directory lock; another thread of this JVM holding it is waited for like another process. */
        private static FileLock lock(FileChannel ch) throws IOException {
            while (true) {
                try {
                    return ch.lock();
                } catch (OverlappingFileLockException sameJvm) {
                    try {
                        Thread.sleep(1);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        throw new java.io.InterruptedIOException("interrupted while waiting for " + ch);
                    }
                }
            }
        }

        @Override
        public void close() {}
    }

    /** Records under an S3 prefix, written with conditional PUTs. */
    final class S3 implements ExperimentRecords {
        private final S3Conditional objects;
        private final String prefix;
        private final boolean ownsClient;

        S3(S3Conditional objects, String prefix, boolean ownsClient) {
            this.objects = objects;
            this.prefix = prefix;
            this.ownsClient = ownsClient;
        }

        @Override
        public Optional<Versioned> read(String name) {
            return objects.get(prefix + "/" + check(name) + ".json")
                    .map(s -> new Versioned(new String(s.bytes(), StandardCharsets.UTF_8), s.etag()));
        }

        @Override
        public Optional<String> write(String name, String expectedVersion, String json) {
            return objects.put(
                    prefix + "/" + check(name) + ".json", expectedVersion, json.getBytes(StandardCharsets.UTF_8));
        }

        @Override
        public void close() {
            if (ownsClient) {
                objects.close();
            }
        }
    }
}
