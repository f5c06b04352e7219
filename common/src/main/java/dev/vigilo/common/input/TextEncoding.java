package dev.vigilo.common.input;

import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CoderResult;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Optional;

/**
 * Checks that the bytes of a text file Vigilo reads (a profile, a pipeline, its seed input, a dataset, a
 * configuration) are UTF-8, so every reader reports the two usual mistakes the same way instead of with a decoder's
 * message: a file saved as UTF-16 or UTF-32 (recognized by its byte order mark, as editors and PowerShell write it)
 * and a malformed byte (reported at its line, 1-based byte column and byte offset in the line, as
 * {@code dataset upload} does). Stateless and thread-safe.
 */
public final class TextEncoding {
    /** The UTF-8 byte order mark, which some editors put first; readers skip it. */
    private static final int[] UTF8_BOM = {0xEF, 0xBB, 0xBF};

    /** Byte order marks of other encodings, longest first (UTF-32LE starts like UTF-16LE). */
    private static final int[][] FOREIGN = {
        {0xFF, 0xFE, 0x00, 0x00}, {0x00, 0x00, 0xFE, 0xFF}, {0xFF, 0xFE}, {0xFE, 0xFF}
    };

    private static final String[] FOREIGN_NAMES = {
        "UTF-32 (little-endian)", "UTF-32 (big-endian)", "UTF-16 (little-endian)", "UTF-16 (big-endian)"
    };

    private TextEncoding() {}

    /**
     * A malformed UTF-8 sequence.
     *
     * @param line   1-based line of the offending byte
     * @param column 1-based byte column in that line (the byte offset in the line plus one)
     * @param offset byte offset from the start of the bytes checked
     * @param value  the offending byte (0..255)
     */
    public record Malformed(long line, long column, long offset, int value) {
        /**
         * The problem in the words {@code dataset upload} uses: {@code bytes are not valid UTF-8 (byte 0xff at byte
         * offset 20 of the line)}, without the position prefix.
         */
        public String describe() {
            return "bytes are not valid UTF-8 (byte 0x" + String.format("%02x", value) + " at byte offset "
                    + (column - 1) + " of the line)";
        }
    }

    /**
     * When {@code bytes[0, length)} start with the byte order mark of another encoding, the problem in one phrase:
     * {@code is UTF-16 (little-endian) text (it starts with the byte order mark FF FE); save it as UTF-8}.
     */
    public static Optional<String> notUtf8(byte[] bytes, int length) {
        for (int i = 0; i < FOREIGN.length; i++) {
            if (startsWith(bytes, length, FOREIGN[i])) {
                StringBuilder mark = new StringBuilder();
                for (int b : FOREIGN[i]) {
                    mark.append(mark.length() == 0 ? "" : " ").append(String.format("%02X", b));
                }
                return Optional.of("is " + FOREIGN_NAMES[i] + " text (it starts with the byte order mark " + mark
                        + "); save it as UTF-8");
            }
        }
        return Optional.empty();
    }

    /** 3 when {@code bytes[0, length)} start with the UTF-8 byte order mark, else 0. */
    public static int utf8MarkLength(byte[] bytes, int length) {
        return startsWith(bytes, length, UTF8_BOM) ? UTF8_BOM.length : 0;
    }

    /** The first malformed UTF-8 sequence of {@code bytes}, if any. */
    public static Optional<Malformed> firstMalformed(byte[] bytes) {
        return firstMalformed(bytes, 0, bytes.length);
    }

    /**
     * The first malformed UTF-8 sequence of {@code bytes[from, to)}, if any; lines count from {@code from} (line 1)
     * and end at {@code '\n'}.
     */
    public static Optional<Malformed> firstMalformed(byte[] bytes, int from, int to) {
        CharsetDecoder utf8 = StandardCharsets.UTF_8
                .newDecoder()
                .onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT);
        ByteBuffer in = ByteBuffer.wrap(bytes, from, to - from);
        CharBuffer out = CharBuffer.allocate(8192);
        while (true) {
            CoderResult result = utf8.decode(in, out, true);
            if (result.isError()) {
                return Optional.of(at(bytes, from, in.position(), bytes[in.position()] & 0xFF));
            }
            if (result.isOverflow()) {
                out.clear();
                continue;
            }
            // At the end of input a sequence cut short is reported as malformed above.
            return Optional.empty();
        }
    }

    private static Malformed at(byte[] bytes, int from, int at, int value) {
        long line = 1;
        int lineStart = from;
        for (int i = from; i < at; i++) {
            if (bytes[i] == '\n') {
                line++;
                lineStart = i + 1;
            }
        }
        return new Malformed(line, at - lineStart + 1, at - from, value);
    }

    private static boolean startsWith(byte[] bytes, int length, int[] prefix) {
        if (length < prefix.length) {
            return false;
        }
        for (int i = 0; i < prefix.length; i++) {
            if ((bytes[i] & 0xFF) != prefix[i]) {
                return false;
            }
        }
        return true;
    }
}
