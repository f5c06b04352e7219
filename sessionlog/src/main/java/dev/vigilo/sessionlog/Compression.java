package dev.vigilo.sessionlog;

import dev.vigilo.common.input.TextEncoding;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Locale;

/**
 * The two on-disk encodings of the published format: {@code session.jsonl.zstd} (a concatenation of zstd
 * frames) and {@code session.jsonl} (the same JSONL, uncompressed). Readers detect the encoding from the bytes
 * (the zstd frame magic at byte 0, or not); see {@link #detect}.
 */
public enum Compression {
    /** zstd frames ({@code session.jsonl.zstd}). */
    ZSTD,
    /** uncompressed JSONL ({@code session.jsonl}). */
    NONE;

    private static final byte[] MAGIC = {0x28, (byte) 0xB5, 0x2F, (byte) 0xFD};

    /** @return the name the published backend's {@code compression} setting uses: "zstd" or "none" */
    public String jsonName() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** @return the file-name suffix the published backend uses for this encoding */
    public String suffix() {
        return this == ZSTD ? ".jsonl.zstd" : ".jsonl";
    }

    /**
     * The encoding a file name claims: {@code *.jsonl} is uncompressed, {@code *.zstd} / {@code *.zst} is zstd;
     * any other name (a repair output {@code *.repaired}, a backup {@code *.bak-<millis>}) claims nothing.
     *
     * @return the claimed encoding, or null
     */
    public static Compression claimedBy(Path file) {
        Path name = file.getFileName();
        if (name == null) {
            return null;
        }
        String n = name.toString().toLowerCase(Locale.ROOT);
        if (n.endsWith(".jsonl")) {
            return NONE;
        }
        if (n.endsWith(".zstd") || n.endsWith(".zst")) {
            return ZSTD;
        }
        return null;
    }

    /**
     * Detects the encoding of an existing log from its first bytes: the zstd frame magic means {@link #ZSTD},
     * anything else {@link #NONE}. A file too short to tell (empty, or a prefix of the magic) takes the encoding
     * its name claims (zstd when the name claims none); such a file has no header and is rejected either way.
     */
    static Compression detect(FileChannel ch, Path file) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(4);
        while (b.hasRemaining()) {
            if (ch.read(b, b.position()) < 0) {
                break;
            }
        }
        int n = b.position();
        boolean prefix = true;
        for (int i = 0; i < n; i++) {
            if (b.get(i) != MAGIC[i]) {
                prefix = false;
            }
        }
        if (!prefix) {
            return NONE;
        }
        if (n == 4) {
            return ZSTD;
        }
        return claimedBy(file) == NONE ? NONE : ZSTD;
    }

    /**
     * Why a file without the zstd frame magic is not an uncompressed log either, or null when it may be one: the
     * first line of a JSONL log is its header, a JSON object, so after optional spaces or tabs the first byte is
     * {@code '{'}. Random bytes, a binary file or text in another encoding would otherwise be called "uncompressed
     * JSONL" (by a name mismatch) or a log with a bad header.
     */
    static String notASessionLog(FileChannel ch, Path file) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(8);
        while (b.hasRemaining()) {
            if (ch.read(b, b.position()) < 0) {
                break;
            }
        }
        int n = b.position();
        byte[] head = Arrays.copyOf(b.array(), n);
        int i = 0;
        while (i < n && (head[i] == ' ' || head[i] == '\t')) {
            i++;
        }
        if (i == n || head[i] == '{') {
            return null;
        }
        String foreign = TextEncoding.notUtf8(head, n).orElse(null);
        if (foreign != null) {
            return file + " " + foreign.replace("; save it as UTF-8", "") + ", not a session log: session logs"
                    + " are UTF-8 JSONL (session.jsonl) or zstd frames of it (session.jsonl.zstd)";
        }
        StringBuilder first = new StringBuilder();
        for (int k = 0; k < n; k++) {
            first.append(String.format("%02X ", head[k] & 0xFF));
        }
        return file + " is not a session log: it starts with "
                + first.toString().strip()
                + ", neither the zstd frame magic (28 B5 2F FD) nor a JSON line ('{'); give a session.jsonl.zstd or"
                + " session.jsonl file";
    }

    /**
     * @return why {@code file}'s name disagrees with its detected encoding {@code actual} (the published reader picks
     *     its decoder by the name, so it would refuse the file), or null when they agree or the name claims nothing
     */
    static String nameMismatch(Path file, Compression actual) {
        Compression claimed = claimedBy(file);
        if (claimed == null || claimed == actual) {
            return null;
        }
        return actual == NONE
                ? file + " holds uncompressed JSONL (no zstd frame magic at byte 0) but its name says zstd; the "
                        + "published reader chooses its decoder by the name and would refuse it: rename it to session.jsonl"
                : file + " holds zstd frames but its name ends in .jsonl (uncompressed); the published reader chooses "
                        + "its decoder by the name and would refuse it: rename it to session.jsonl.zstd";
    }
}
