package dev.vigilo.dataset;

import com.github.luben.zstd.ZstdIOException;
import com.github.luben.zstd.ZstdInputStream;
import java.io.BufferedInputStream;
import java.io.EOFException;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Optional;
import java.util.zip.GZIPInputStream;
import java.util.zip.ZipException;

/**
 * Where an upload's cases come from, read as JSON lines: the one view of the source both upload passes, the source
 * hash and the duplicate search read, so they all see the same bytes.
 *
 * <ul>
 *   <li>{@code .jsonl} (or any other name): the file's bytes, one case per line, as always;</li>
 *   <li>{@code .jsonl.gz}, {@code .jsonl.zst}: the decompressed bytes (gzip, zstd), one case per line;</li>
 *   <li>{@code .csv}: one case per row ({@link MappedCases}), the header row naming the columns;</li>
 *   <li>{@code .parquet}, or a directory of {@code .parquet} shards: one case per row ({@link ParquetRecords});</li>
 *   <li>a JSON lines file with a {@link CaseMap}: one record (a JSON object) per line, mapped onto a case.</li>
 * </ul>
 *
 * <p>Line numbers: the JSON lines a mapped source yields keep the source's numbering (a blank line stays blank;
 * a CSV's header is line 1 as a blank line), so an error's line is the file's line, except after a CSV row whose
 * cells span several lines: {@link #relocate} then finds the row's real line by reading the file again. A Parquet
 * source's line N is its N-th row over every shard; {@link #relocate} names the shard, row group and row.
 */
final class UploadSource {
    /** The formats an upload reads. */
    enum Format {
        JSONL,
        JSONL_GZIP,
        JSONL_ZSTD,
        CSV,
        PARQUET
    }

    private final Path file;
    private final Format format;
    private final Optional<CaseMap> map;

    private UploadSource(Path file, Format format, Optional<CaseMap> map) {
        this.file = file;
        this.format = format;
        this.map = map;
    }

    /** The source of {@code request}, its format from the file name. */
    static UploadSource of(UploadRequest request) {
        Path file = request.file();
        String name =
                file.getFileName() == null ? "" : file.getFileName().toString().toLowerCase(Locale.ROOT);
        Format format = name.endsWith(".parquet") || Files.isDirectory(file)
                ? Format.PARQUET
                : name.endsWith(".gz")
                        ? Format.JSONL_GZIP
                        : name.endsWith(".zst") || name.endsWith(".zstd")
                                ? Format.JSONL_ZSTD
                                : name.endsWith(".csv") ? Format.CSV : Format.JSONL;
        return new UploadSource(file, format, request.map());
    }

    Path file() {
        return file;
    }

    Format format() {
        return format;
    }

    /** Whether the upload's passes report progress against the file's size (the bytes they read are the file's). */
    boolean sizedByFile() {
        return format == Format.JSONL && map.isEmpty();
    }

    /** The cases as JSON lines, from the start. The caller closes it. */
    InputStream open() throws IOException {
        if (format == Format.PARQUET) {
            return MappedCases.ofParquet(new ParquetRecords(file, map));
        }
        InputStream raw = Files.newInputStream(file);
        try {
            InputStream lines = switch (format) {
                case JSONL, CSV, PARQUET -> raw; // PARQUET never gets here: it is read above
                case JSONL_GZIP -> new Decompressed(new GZIPInputStream(raw, 1 << 16), "gzip");
                case JSONL_ZSTD -> new Decompressed(new ZstdInputStream(raw), "zstd");
            };
            if (format == Format.CSV) {
                return MappedCases.ofCsv(file, lines, map);
            }
            return map.isPresent() ? MappedCases.ofJsonLines(file, lines, map.get()) : lines;
        } catch (IOException e) {
            raw.close();
            if (format == Format.JSONL_GZIP) {
                throw notCompressed(e); // the header is read at once: a file that is not gzip fails here
            }
            throw e;
        } catch (RuntimeException e) {
            raw.close();
            throw e;
        }
    }

    /**
     * The error {@code e} (found on the JSON lines this source yields) at its line of the file: for a CSV file the
     * line its row starts on.
     */
    InvalidDatasetException relocate(InvalidDatasetException e) {
        if ((format != Format.CSV && format != Format.PARQUET) || e.line() <= 0) {
            return e;
        }
        String message = e.getMessage();
        String prefix = file + ":" + e.line() + (e.column() > 0 ? ":" + e.column() : "") + ": ";
        String problem = message.startsWith(prefix) ? message.substring(prefix.length()) : message;
        if (format == Format.PARQUET) {
            // The column of a generated JSON line means nothing in the file: the row is the place.
            return ParquetRecords.locate(file, e.line())
                    .map(at -> at.error(problem))
                    .orElse(e);
        }
        long line = physicalLine(e.line());
        if (line == e.line()) {
            return e;
        }
        return new InvalidDatasetException(file, line, 0, problem);
    }

    /** Where the record yielded as JSON line {@code line} is, in words: {@code line N}, or a Parquet row. */
    String where(long line) {
        if (format == Format.PARQUET) {
            return ParquetRecords.locate(file, line)
                    .map(at -> at.shard() + " " + at.words())
                    .orElse("row " + line);
        }
        return "line " + physicalLine(line);
    }

    /** The line of the file where the record yielded as JSON line {@code line} starts. */
    long physicalLine(long line) {
        if (format != Format.CSV) {
            return line;
        }
        try (InputStream in = Files.newInputStream(file)) {
            return MappedCases.csvRowLine(in, line);
        } catch (IOException e) {
            return line;
        }
    }

    private InvalidDatasetException notCompressed(IOException e) {
        return new InvalidDatasetException(
                file,
                0,
                0,
                "not a valid gzip file (" + e.getMessage() + "); check the file, or rename it if it is not"
                        + " gzip-compressed");
    }

    /**
     * A decompressing stream whose damage is the file's fault: a corrupt or truncated stream is an invalid dataset
     * (exit 3), not an unreadable file (an outage); other read errors stay what they are.
     */
    private final class Decompressed extends FilterInputStream {
        private final String kind;

        Decompressed(InputStream in, String kind) {
            super(new BufferedInputStream(in, 1 << 16));
            this.kind = kind;
        }

        @Override
        public int read() throws IOException {
            try {
                return super.read();
            } catch (ZipException | EOFException | ZstdIOException e) {
                throw damaged(e);
            }
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            try {
                return super.read(b, off, len);
            } catch (ZipException | EOFException | ZstdIOException e) {
                throw damaged(e);
            }
        }

        private InvalidDatasetException damaged(IOException e) {
            return new InvalidDatasetException(
                    file,
                    0,
                    0,
                    "the " + kind + " stream is damaged or truncated (" + e.getMessage()
                            + "); compress the file again");
        }
    }
}
