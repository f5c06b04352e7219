package dev.vigilo.common.input;

import dev.vigilo.common.errors.InvalidInputException;
import java.nio.charset.Charset;
import java.util.regex.Pattern;

/**
 * Checks the names users choose. Two rules: a name that becomes a path segment (a pipeline or experiment name) is
 * 1-128 characters of letters, digits, {@code .}, {@code _} and {@code -}, not starting with a dot (so never
 * {@code ..}, never a {@code /}); a label (a dataset name) is printable text: no control characters, line breaks or
 * terminal escapes, which would let a name rewrite what a later listing shows, and no U+FFFD, the replacement
 * character the JVM puts where the bytes of an argument or a file name do not decode in the platform's encoding (such
 * a name is not what the user typed). Names are refused, never silently changed; {@link #printable} escapes text of
 * unknown origin for display.
 */
public final class Names {
    /** The path-segment pattern, also documented in docs/cli.md. */
    public static final Pattern SEGMENT = Pattern.compile("[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}");

    /** Longest label accepted, in characters. */
    public static final int MAX_LABEL = 256;

    /** U+FFFD, what a decoder puts in place of bytes it cannot decode. */
    private static final int REPLACEMENT = 0xFFFD;

    private Names() {}

    /**
     * {@code value} if it is a valid path-segment name.
     *
     * @param what the option or key it came from, for the message (e.g. {@code "--experiment"})
     * @throws InvalidInputException naming the rule otherwise
     */
    public static String segment(String value, String what) {
        if (value == null || !SEGMENT.matcher(value).matches()) {
            throw new InvalidInputException(what + ": " + quote(value)
                    + " is not a valid name: use 1-128 letters, digits, '.', '_' or '-', not starting with '.'");
        }
        return value;
    }

    /**
     * {@code value} if it is a printable label of 1 to {@link #MAX_LABEL} characters without U+FFFD.
     *
     * @throws InvalidInputException naming the first offending character otherwise
     */
    public static String label(String value, String what) {
        if (value == null || value.isBlank()) {
            throw new InvalidInputException(what + ": a name must not be empty");
        }
        if (value.length() > MAX_LABEL) {
            throw new InvalidInputException(
                    what + ": the name has " + value.length() + " characters; use at most " + MAX_LABEL);
        }
        for (int i = 0; i < value.length(); ) {
            int c = value.codePointAt(i);
            if (c == REPLACEMENT) {
                throw new InvalidInputException(what + ": the name contains U+FFFD (the replacement character) at"
                        + " position " + (i + 1) + ": its bytes are not valid in this system's character encoding ("
                        + platformEncoding() + ", from the locale: LANG, LC_ALL); give valid text in that encoding,"
                        + " or use a UTF-8 locale such as C.UTF-8");
            }
            if (!isPrintable(c)) {
                throw new InvalidInputException(what + ": " + quote(value) + " contains the control character "
                        + String.format("U+%04X", c) + " at position " + (i + 1)
                        + "; use printable characters only (no line breaks, tabs or terminal escapes)");
            }
            i += Character.charCount(c);
        }
        return value;
    }

    /**
     * {@code text} with every non-printable character written as {@code \\uXXXX}, safe to show on a terminal;
     * printable text, backslashes included, is unchanged.
     */
    public static String printable(String text) {
        if (text == null) {
            return "null";
        }
        StringBuilder b = new StringBuilder(text.length());
        for (int i = 0; i < text.length(); ) {
            int c = text.codePointAt(i);
            if (isPrintable(c)) {
                b.appendCodePoint(c);
            } else {
                for (char unit : Character.toChars(c)) {
                    b.append(String.format("\\u%04x", (int) unit));
                }
            }
            i += Character.charCount(c);
        }
        return b.toString();
    }

    /** {@code text} in double quotes, escaped as by {@link #printable}, and shortened when long. */
    public static String quote(String text) {
        if (text == null) {
            return "(none)";
        }
        String shown = text.length() > 80 ? text.substring(0, 77) + "..." : text;
        return "\"" + printable(shown) + "\"";
    }

    /** The charset the JVM decoded the command line and file names with (not always the default charset). */
    private static String platformEncoding() {
        return System.getProperty("sun.jnu.encoding", Charset.defaultCharset().name());
    }

    private static boolean isPrintable(int c) {
        int type = Character.getType(c);
        return type != Character.CONTROL
                && type != Character.FORMAT
                && type != Character.UNASSIGNED
                && type != Character.SURROGATE
                && type != Character.PRIVATE_USE
                && type != Character.LINE_SEPARATOR
                && type != Character.PARAGRAPH_SEPARATOR;
    }
}
