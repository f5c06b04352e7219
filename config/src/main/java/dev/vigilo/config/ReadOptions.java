package dev.vigilo.config;

import com.fasterxml.jackson.core.StreamReadConstraints;
import java.util.Objects;

/**
 * How strictly a YAML or JSON document is read.
 *
 * @param limits         the parser's limits (nesting depth, string and number length)
 * @param strict         duplicate keys and anything after the document's single value are syntax errors
 * @param codePointLimit the most characters a YAML document may have (0: the YAML parser's default)
 * @param maxAliases     the most YAML aliases of collections (0: the YAML parser's default)
 * @param tooLong        the words for a value over a limit other than depth or number length (a string)
 */
public record ReadOptions(
        StreamReadConstraints limits, boolean strict, int codePointLimit, int maxAliases, String tooLong) {
    public ReadOptions {
        Objects.requireNonNull(limits, "limits");
        Objects.requireNonNull(tooLong, "tooLong");
    }

    /** The parsers' defaults: duplicate keys keep the last value, trailing documents are ignored. */
    public static ReadOptions lenient() {
        return new ReadOptions(
                StreamReadConstraints.defaults(), false, 0, 0, "a value longer than this reader accepts");
    }
}
