package dev.vigilo.config;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.exc.StreamConstraintsException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.dataformat.toml.TomlMapper;
import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.common.input.TextEncoding;
import java.io.IOException;
import java.util.Arrays;
import java.util.Objects;
import java.util.Optional;

/**
 * The TOML half of {@link ConfigDocument}, for Vigilo's TOML configuration files ({@code storage.toml},
 * {@code execution.toml}): their bytes become a tree, or one {@link InvalidInputException} (a
 * {@link ConfigSyntaxException} for TOML syntax) saying {@code WHERE:LINE:COLUMN: problem} in plain words. A
 * UTF-8 byte order mark is skipped; a file saved as UTF-16 or UTF-32, a byte that is not UTF-8 and a document nested
 * deeper than the parser allows are named as such, where they are, instead of with the parser's or the decoder's
 * message (which name its own classes, or no place at all). Stateless and thread-safe.
 */
final class TomlText {
    /** Up to this size a limit of the parser is located by parsing prefixes; configuration files are far smaller. */
    private static final int LOCATE_LIMIT_BYTES = 1 << 20;

    private TomlText() {}

    /**
     * The document {@code content} holds; an empty document is an empty table.
     *
     * @param where what and which file, for the message (e.g. {@code "storage config /etc/vigilo/storage.toml"})
     * @throws InvalidInputException {@code WHERE:LINE:COLUMN: ...} (or {@code WHERE: ...} when the problem has no
     *                               place) for text that is not UTF-8 or not valid TOML
     */
    static JsonNode parse(byte[] content, String where) {
        Objects.requireNonNull(content, "content");
        Objects.requireNonNull(where, "where");
        TextEncoding.notUtf8(content, content.length).ifPresent(problem -> {
            throw new InvalidInputException(where + ":1:1: " + problem);
        });
        int from = TextEncoding.utf8MarkLength(content, content.length);
        byte[] text = from == 0 ? content : Arrays.copyOfRange(content, from, content.length);
        TextEncoding.firstMalformed(text).ifPresent(bad -> {
            throw new InvalidInputException(
                    where + ":" + bad.line() + ":" + (bad.column() + (bad.line() == 1 ? from : 0)) + ": "
                            + bad.describe() + "; save the file as UTF-8");
        });
        JsonNode root;
        try {
            root = new TomlMapper().readTree(text);
        } catch (StreamConstraintsException e) {
            long[] at = text.length <= LOCATE_LIMIT_BYTES ? locate(text) : null;
            throw new ConfigSyntaxException(
                    where,
                    "TOML",
                    at == null ? Optional.empty() : Optional.of(new Position(at[0], at[1])),
                    ParserLimits.describe(
                            e, StreamReadConstraints.defaults(), "a value longer than this reader accepts"),
                    true,
                    e);
        } catch (JsonProcessingException e) {
            JsonLocation at = e.getLocation();
            throw new ConfigSyntaxException(
                    where,
                    "TOML",
                    at == null || at.getLineNr() < 1 || at.getColumnNr() < 1
                            ? Optional.empty()
                            : Optional.of(new Position(at.getLineNr(), at.getColumnNr())),
                    ConfigDocument.firstLine(e.getOriginalMessage()),
                    false,
                    e);
        } catch (IOException e) {
            throw new InvalidInputException(where + ": cannot be read: " + e.getMessage(), e);
        }
        // An empty document parses to nothing rather than to an empty table.
        return root == null || root.isMissingNode() ? new TomlMapper().createObjectNode() : root;
    }

    /**
     * Where the TOML parser hits its limit: it reports no location, so find the shortest prefix of {@code text} that
     * still hits it, first by whole lines, then by bytes of that line. Everything before the limit parses the same in
     * a prefix as in the whole text, so "the prefix hits the limit" only turns from false to true as the prefix grows.
     *
     * @return {line, byte column}, both 1-based, or null when no prefix hits it
     */
    private static long[] locate(byte[] text) {
        int lines = 1;
        for (byte b : text) {
            if (b == '\n') {
                lines++;
            }
        }
        int low = 1;
        int high = lines;
        if (!hitsLimit(text, endOfLine(text, high))) {
            return null;
        }
        while (low < high) {
            int mid = (low + high) >>> 1;
            if (hitsLimit(text, endOfLine(text, mid))) {
                high = mid;
            } else {
                low = mid + 1;
            }
        }
        int start = low == 1 ? 0 : endOfLine(text, low - 1) + 1;
        int lo = start + 1;
        int hi = endOfLine(text, low);
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (hitsLimit(text, mid)) {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        return new long[] {low, lo - start};
    }

    /** The offset of the line feed ending 1-based {@code line}, or the text's length for the last line. */
    private static int endOfLine(byte[] text, int line) {
        int seen = 1;
        for (int i = 0; i < text.length; i++) {
            if (text[i] == '\n' && seen++ == line) {
                return i;
            }
        }
        return text.length;
    }

    private static boolean hitsLimit(byte[] text, int length) {
        try {
            new TomlMapper().readTree(Arrays.copyOf(text, length));
            return false;
        } catch (StreamConstraintsException e) {
            return true;
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }
}
