package dev.vigilo.config;

import com.google.re2j.Pattern;
import com.google.re2j.PatternSyntaxException;
import dev.vigilo.common.errors.InvalidInputException;
import java.util.ArrayDeque;
import java.util.Deque;

/**
 * Compiles untrusted regular expressions safely, with RE2/J: matching takes time linear in the input (no
 * backtracking, so {@code (a+)+$} is harmless), and patterns whose compiled program would be huge are rejected
 * before RE2/J builds it. RE2/J itself has no such bound: {@code ((a{1000}){1000}){1000}} would exhaust the heap,
 * and a thousand nested groups its stack. The same rules apply when a profile is validated and when a worker
 * evaluates, so a pattern accepted by one is accepted by the other. Stateless.
 */
public final class SafeRegex {
    /** The largest accepted program size, as estimated by expanding counted repetitions. */
    public static final int MAX_PROGRAM_SIZE = 100_000;
    /** The deepest accepted group nesting. */
    public static final int MAX_NESTING = 1_000;

    private SafeRegex() {}

    /**
     * Compiles {@code pattern} with RE2 syntax and default flags ({@code ^}/{@code $} match at the start/end of the
     * whole text, {@code .} does not match a newline; inline flags such as {@code (?i)}, {@code (?s)}, {@code (?m)}
     * change that).
     *
     * @throws InvalidInputException saying what is wrong, without a location (the caller adds where the pattern came
     *     from)
     */
    public static Pattern compile(String pattern) {
        long size = estimatedSize(pattern);
        if (size > MAX_PROGRAM_SIZE) {
            throw new InvalidInputException("regular expression is too large: its repetitions and nesting expand to"
                    + " more than " + MAX_PROGRAM_SIZE + " steps (or more than " + MAX_NESTING + " nested groups);"
                    + " use smaller counted repetitions such as {n,m}");
        }
        try {
            return Pattern.compile(pattern);
        } catch (PatternSyntaxException e) {
            String m = e.getMessage() == null ? "syntax error" : e.getMessage();
            m = m.startsWith("error parsing regexp: ") ? m.substring("error parsing regexp: ".length()) : m;
            throw new InvalidInputException(
                    "invalid regular expression: " + oneLine(m) + " (RE2 syntax: no backreferences or lookaround)");
        }
    }

    /**
     * An over-estimate of the compiled program size: each literal, class or operator counts 1, a group counts its
     * contents, and {@code x{n,m}} counts about {@code max(n, m)} copies of {@code x} (nesting multiplies). Returns
     * {@link #MAX_PROGRAM_SIZE} + 1 as soon as the estimate exceeds the limit or nesting exceeds {@link #MAX_NESTING}.
     * Syntax errors are left for RE2/J to report.
     */
    static long estimatedSize(String p) {
        final long cap = MAX_PROGRAM_SIZE + 1L;
        Deque<long[]> stack = new ArrayDeque<>();
        long[] frame = {0, 0}; // {size so far, size of the last atom}
        int i = 0;
        int n = p.length();
        while (i < n) {
            char c = p.charAt(i);
            switch (c) {
                case '\\' -> {
                    if (i + 1 < n && p.charAt(i + 1) == 'Q') {
                        int end = p.indexOf("\\E", i + 2);
                        int literal = (end < 0 ? n : end) - (i + 2);
                        frame[0] = Math.min(cap, frame[0] + literal);
                        frame[1] = 1;
                        i = end < 0 ? n : end + 2;
                        continue;
                    }
                    i = skipEscape(p, i);
                    atom(frame, 1, cap);
                    continue;
                }
                case '[' -> {
                    i = skipClass(p, i);
                    atom(frame, 1, cap);
                    continue;
                }
                case '(' -> {
                    if (stack.size() >= MAX_NESTING) {
                        return cap;
                    }
                    stack.push(frame);
                    frame = new long[] {0, 0};
                }
                case ')' -> {
                    if (stack.isEmpty()) {
                        atom(frame, 1, cap);
                    } else {
                        long group = Math.min(cap, frame[0] + 2);
                        frame = stack.pop();
                        atom(frame, group, cap);
                    }
                }
                case '|' -> {
                    frame[0] = Math.min(cap, frame[0] + 1);
                    frame[1] = 0;
                }
                case '*', '+', '?' -> frame[0] = Math.min(cap, frame[0] + 1);
                case '{' -> {
                    int[] repeat = repeat(p, i);
                    if (repeat == null) {
                        atom(frame, 1, cap);
                    } else {
                        long k = repeat[0];
                        frame[0] = Math.min(cap, frame[0] + frame[1] * Math.max(0, k - 1) + k);
                        frame[1] = Math.min(cap, frame[1] * k + k);
                        i = repeat[1];
                        continue;
                    }
                }
                default -> atom(frame, 1, cap);
            }
            if (frame[0] >= cap) {
                return cap;
            }
            i++;
        }
        long size = frame[0];
        for (long[] open : stack) {
            size = Math.min(cap, size + open[0]);
        }
        return size;
    }

    private static void atom(long[] frame, long size, long cap) {
        frame[0] = Math.min(cap, frame[0] + size);
        frame[1] = size;
    }

    /** Index after the escape at {@code i}: {@code \p{Greek}} and {@code \x{10FFFF}} as a whole, else two chars. */
    private static int skipEscape(String p, int i) {
        if (i + 2 < p.length() && "pPx".indexOf(p.charAt(i + 1)) >= 0 && p.charAt(i + 2) == '{') {
            int close = p.indexOf('}', i + 3);
            return close < 0 ? p.length() : close + 1;
        }
        return Math.min(p.length(), i + 2);
    }

    /** Index after the character class opening at {@code i} (a leading {@code ]} is literal; {@code [:alpha:]}). */
    private static int skipClass(String p, int i) {
        int j = i + 1;
        if (j < p.length() && p.charAt(j) == '^') {
            j++;
        }
        if (j < p.length() && p.charAt(j) == ']') {
            j++;
        }
        while (j < p.length()) {
            char c = p.charAt(j);
            if (c == '\\') {
                j = skipEscape(p, j);
            } else if (c == '[' && j + 1 < p.length() && p.charAt(j + 1) == ':') {
                int close = p.indexOf(":]", j + 2);
                j = close < 0 ? j + 1 : close + 2;
            } else if (c == ']') {
                return j + 1;
            } else {
                j++;
            }
        }
        return j;
    }

    /** For {@code {n}}, {@code {n,}} or {@code {n,m}} at {@code i}: {copies, index after}; null if not a repeat. */
    private static int[] repeat(String p, int i) {
        int j = i + 1;
        int min = 0;
        int digits = 0;
        while (j < p.length() && Character.isDigit(p.charAt(j))) {
            min = Math.min(MAX_PROGRAM_SIZE, min * 10 + (p.charAt(j) - '0'));
            j++;
            digits++;
        }
        if (digits == 0 || j >= p.length()) {
            return null;
        }
        int copies = min;
        if (p.charAt(j) == ',') {
            j++;
            int max = 0;
            int maxDigits = 0;
            while (j < p.length() && Character.isDigit(p.charAt(j))) {
                max = Math.min(MAX_PROGRAM_SIZE, max * 10 + (p.charAt(j) - '0'));
                j++;
                maxDigits++;
            }
            copies = maxDigits == 0 ? min + 1 : Math.max(min, max);
        }
        if (j >= p.length() || p.charAt(j) != '}') {
            return null;
        }
        return new int[] {copies, j + 1};
    }

    /** RE2/J's message on one line of at most 200 characters: it quotes the pattern, which may span lines. */
    private static String oneLine(String m) {
        String line = m.replaceAll("[\\s\\p{Cntrl}]+", " ").strip();
        return line.length() > 200 ? line.substring(0, 200) + "..." : line;
    }
}
