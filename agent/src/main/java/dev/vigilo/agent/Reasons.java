package dev.vigilo.agent;

import dev.vigilo.common.errors.SecretValues;
import dev.vigilo.common.errors.Secrets;
import java.nio.charset.StandardCharsets;
import java.util.Locale;

/**
 * How built-in evaluators quote texts in their reasons, and the bound of every reason
 * ({@link EvaluatorResult#MAX_REASON_BYTES}). Positions and lengths count Unicode code points (an emoji is one
 * character). A quoted part of a longer text is masked as a cut ({@link SecretValues#maskCut}): what a cut leaves of
 * a secret value matches no mask afterwards. Control characters are shown escaped ({@code \n}, {@code \r},
 * {@code \t}, {@code \}{@code uXXXX}) so that a reason stays on one line.
 */
final class Reasons {
    /** The marker of a cut: where a quoted text or a reason was shortened. */
    static final String CUT = "…";
    /** The most code points of a text a reason quotes. */
    static final int SHOWN = 80;
    /** Code points shown before a difference; the rest of {@link #SHOWN} come after it. */
    static final int BEFORE = 30;

    private Reasons() {}

    /** {@code text} in backticks, its first {@link #SHOWN} code points followed by {@link #CUT} when longer. */
    static String quote(String text, SecretValues secrets) {
        return window(text, 0, secrets);
    }

    /**
     * Up to {@link #SHOWN} code points of {@code text} around code point {@code at} ({@link #BEFORE} before it when
     * there are so many), in backticks, with {@link #CUT} where the window cuts the text.
     */
    static String window(String text, int at, SecretValues secrets) {
        int length = text.codePointCount(0, text.length());
        int from = Math.max(0, Math.min(at - BEFORE, length - SHOWN));
        int to = Math.min(length, from + SHOWN);
        int begin = text.offsetByCodePoints(0, from);
        int end = text.offsetByCodePoints(begin, to - from);
        boolean cutBefore = from > 0;
        boolean cutAfter = to < length;
        String part = secrets.maskCut(text.substring(begin, end), cutBefore, cutAfter);
        return "`" + (cutBefore ? CUT : "") + escaped(part) + (cutAfter ? CUT : "") + "`";
    }

    /**
     * The part {@code [begin, end)} (UTF-16 indexes) of {@code text} in backticks, masked as a part cut out of
     * {@code text}, its first {@link #SHOWN} code points followed by {@link #CUT} when longer.
     */
    static String excerpt(String text, int begin, int end, SecretValues secrets) {
        String part = text.substring(begin, end);
        int length = part.codePointCount(0, part.length());
        int shownEnd = length > SHOWN ? part.offsetByCodePoints(0, SHOWN) : part.length();
        boolean cutAfter = begin + shownEnd < text.length();
        String masked = secrets.maskCut(part.substring(0, shownEnd), begin > 0, cutAfter);
        return "`" + escaped(masked) + (length > SHOWN ? CUT : "") + "`";
    }

    /** The code point index (from 0) where {@code a} and {@code b} first differ; -1 when they are equal. */
    static int firstDifference(String a, String b) {
        int i = 0;
        int j = 0;
        int index = 0;
        while (i < a.length() && j < b.length()) {
            int ca = a.codePointAt(i);
            int cb = b.codePointAt(j);
            if (ca != cb) {
                return index;
            }
            i += Character.charCount(ca);
            j += Character.charCount(cb);
            index++;
        }
        return i == a.length() && j == b.length() ? -1 : index;
    }

    /** The code point index of UTF-16 index {@code utf16} of {@code text}. */
    static int codePointIndex(String text, int utf16) {
        return text.codePointCount(0, utf16);
    }

    /**
     * {@code reason} with every secret masked, cut to at most {@link EvaluatorResult#MAX_REASON_BYTES} bytes of
     * UTF-8 when longer: on a code point boundary, what the cut leaves of a secret masked, and {@link #CUT} appended.
     */
    static String bound(String reason, SecretValues secrets) {
        String masked = secrets.mask(reason);
        if (utf8Length(masked) <= EvaluatorResult.MAX_REASON_BYTES) {
            return masked;
        }
        // Room for the marker and for the mask that may replace what the cut leaves of a value.
        int budget = EvaluatorResult.MAX_REASON_BYTES - utf8Length(CUT) - utf8Length(Secrets.MASK);
        int end = 0;
        int bytes = 0;
        while (end < masked.length()) {
            int cp = masked.codePointAt(end);
            int n = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
            if (bytes + n > budget) {
                break;
            }
            bytes += n;
            end += Character.charCount(cp);
        }
        return secrets.maskCut(masked.substring(0, end), false, true) + CUT;
    }

    /** The length of {@code s} in UTF-8. */
    static int utf8Length(String s) {
        return s.getBytes(StandardCharsets.UTF_8).length;
    }

    private static String escaped(String s) {
        StringBuilder b = new StringBuilder(s.length());
        s.codePoints().forEach(c -> {
            switch (c) {
                case '\n' -> b.append("\\n");
                case '\r' -> b.append("\\r");
                case '\t' -> b.append("\\t");
                default -> {
                    if (Character.isISOControl(c)) {
                        b.append(String.format(Locale.ROOT, "\\u%04x", c));
                    } else {
                        b.appendCodePoint(c);
                    }
                }
            }
        });
        return b.toString();
    }
}
