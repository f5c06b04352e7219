package dev.vigilo.config;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.exc.StreamConstraintsException;

/**
 * A limit of Jackson's parsers ({@link StreamReadConstraints}: nesting depth, number length, string length) in plain
 * words, for every reader of user documents (configuration files, profiles, dataset and seed lines). Jackson's own
 * message names its classes instead of the document's problem, and carries no location. Stateless.
 */
public final class ParserLimits {
    private ParserLimits() {}

    /**
     * What went over a limit, without a position: {@code nested deeper than N levels}, {@code a number longer than
     * N digits}, or {@code tooLong} for any other limit (a string).
     *
     * @param limits  the limits the parser ran with, for the numbers in the words
     * @param tooLong the words for a value over any other limit, e.g. {@code a value longer than a case allows}
     */
    public static String describe(StreamConstraintsException e, StreamReadConstraints limits, String tooLong) {
        String m = String.valueOf(e.getOriginalMessage());
        if (m.startsWith("Document nesting depth")) {
            return "nested deeper than " + limits.getMaxNestingDepth() + " levels";
        }
        if (m.startsWith("Number value length") || m.startsWith("Number length")) {
            return "a number longer than " + limits.getMaxNumberLength() + " digits";
        }
        return tooLong;
    }

    /**
     * Where a parser that hit a limit stopped: it has read the character that went over it, so that character is
     * one column before its current location (never before column 1). Null when the parser knows no location.
     */
    public static JsonLocation lastRead(JsonParser parser) {
        JsonLocation at = parser.currentLocation();
        if (at == null) {
            return null;
        }
        return new JsonLocation(
                at.contentReference(),
                at.getByteOffset(),
                at.getCharOffset(),
                at.getLineNr(),
                Math.max(1, at.getColumnNr() - 1));
    }
}
