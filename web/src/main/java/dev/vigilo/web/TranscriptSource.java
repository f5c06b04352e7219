package dev.vigilo.web;

import dev.vigilo.common.errors.UnavailableException;
import dev.vigilo.storage.Deadline;
import dev.vigilo.storage.ObjectReader;
import dev.vigilo.storage.ObjectRef;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;

/**
 * Where a transcript (a session log, docs/formats/session-log.md) comes from: a local file, or an immutable object
 * of a store (a run's transcript, referenced with its length and SHA-256). The session-log reader works on a file
 * (it reads frames at offsets and the sidecar manifest beside the log), so an object is first read and verified
 * whole, then written to a private temporary file that {@link Opened#close()} deletes.
 */
public interface TranscriptSource {
    /** What the viewer shows as the transcript's name. */
    String name();

    /** Makes the log readable as a file until the result is closed. */
    Opened open();

    /** A readable log file, and whatever must be released after reading it. */
    interface Opened extends AutoCloseable {
        Path file();

        @Override
        void close();
    }

    /** A session log on the local filesystem (already confined by the caller). */
    static TranscriptSource file(Path log) {
        Objects.requireNonNull(log, "log");
        return new TranscriptSource() {
            @Override
            public String name() {
                return log.toString();
            }

            @Override
            public Opened open() {
                return new Opened() {
                    @Override
                    public Path file() {
                        return log;
                    }

                    @Override
                    public void close() {}
                };
            }
        };
    }

    /**
     * An immutable session-log object: read through {@code reader} (length and SHA-256 verified against {@code ref}),
     * then copied to a temporary file.
     */
    static TranscriptSource object(ObjectReader reader, ObjectRef ref) {
        Objects.requireNonNull(reader, "reader");
        Objects.requireNonNull(ref, "ref");
        return new TranscriptSource() {
            @Override
            public String name() {
                return ref.key().value();
            }

            @Override
            public Opened open() {
                byte[] bytes = reader.read(ref, Deadline.after(Duration.ofSeconds(60)));
                try {
                    Path dir = Files.createTempDirectory("vigilo-transcript-");
                    Path file = dir.resolve("session.jsonl.zstd");
                    Files.write(file, bytes);
                    return new Opened() {
                        @Override
                        public Path file() {
                            return file;
                        }

                        @Override
                        public void close() {
                            try {
                                Files.deleteIfExists(file);
                                Files.deleteIfExists(dir);
                            } catch (IOException e) {
                                // A private temporary copy of immutable bytes; nothing depends on its removal.
                            }
                        }
                    };
                } catch (IOException e) {
                    throw new UnavailableException(
                            "cannot write a temporary copy of " + ref.key() + ": " + e.getMessage(), e);
                }
            }
        };
    }
}
