package dev.vigilo.sessionlog;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * A strict, allocation-free JSON scanner for one JSONL line: it validates the line's syntax and records every value
 * on a tape (kind, byte range, subtree end) without decoding strings, so the reader can look at the few fields its
 * rules need. It is deliberately stricter than JSON.parse: whatever it accepts, JSON.parse accepts with the same
 * structure; whatever else (invalid syntax, a BOM, leading whitespace, nesting deeper than {@link #MAX_DEPTH}, a
 * line that does not end in a newline) is left to the exact Jackson path in {@link Json#parseLine}.
 * <p>Bytes >= 0x80 inside strings are accepted as they are: JSON.parse sees them after UTF-8 decoding with
 * replacement, which never turns an ASCII byte into part of another character, so the structure is the same.
 * Not thread-safe: one tape per thread, reused line after line.
 */
final class JsonTape {
    static final byte OBJ = 1, ARR = 2, STR = 3, NUM = 4, TRUE = 5, FALSE = 6, NULL = 7;
    /** String flags: contains a backslash escape; contains a byte >= 0x80. */
    static final int ESC = 1, NON_ASCII = 2;
    /** Number flags: an integer literal (no fraction, no exponent) whose value fits {@link #value}. */
    static final int INT = 4;

    /** parse() results other than a line end. */
    static final int INVALID = -1, INCOMPLETE = -2;

    static final int MAX_DEPTH = 48;

    private static final VarHandle LONG_LE =
            MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
    private static final long ONES = 0x0101010101010101L, HIGHS = 0x8080808080808080L;
    private static final long QUOTES = 0x2222222222222222L, BACKSLASHES = 0x5C5C5C5C5C5C5C5CL;
    private static final long SPACES = 0x2020202020202020L;

    byte[] buf;
    int size;
    byte[] kind = new byte[64];
    int[] start = new int[64];
    int[] end = new int[64];
    /** tape index just past this value's subtree */
    int[] next = new int[64];
    /** members of an object (key/value pairs) or elements of an array */
    int[] count = new int[64];

    int[] flags = new int[64];
    /** integer value of an INT number */
    long[] value = new long[64];

    private int limit;
    private int depth;

    /**
     * Scans the line starting at {@code from}: a JSON value, optional spaces, tabs or carriage returns, then a
     * newline before {@code limit}.
     *
     * @return the index of the line's newline; {@link #INCOMPLETE} when {@code limit} came first while the line
     *     was still valid; {@link #INVALID} when the scanner does not accept the line (the caller finds the newline)
     */
    int parse(byte[] b, int from, int limit) {
        this.buf = b;
        this.limit = limit;
        this.size = 0;
        this.depth = 0;
        if (from >= limit) {
            return INCOMPLETE;
        }
        int p = value(from);
        if (p < 0) {
            return p;
        }
        while (p < limit) {
            byte c = b[p];
            if (c == '\n') {
                return p;
            }
            if (c != ' ' && c != '\t' && c != '\r') {
                return INVALID;
            }
            p++;
        }
        return INCOMPLETE;
    }

    private int add(byte k, int s) {
        if (size == kind.length) {
            grow();
        }
        kind[size] = k;
        start[size] = s;
        flags[size] = 0;
        count[size] = 0;
        return size++;
    }

    private void grow() {
        int n = kind.length * 2;
        kind = java.util.Arrays.copyOf(kind, n);
        start = java.util.Arrays.copyOf(start, n);
        end = java.util.Arrays.copyOf(end, n);
        next = java.util.Arrays.copyOf(next, n);
        count = java.util.Arrays.copyOf(count, n);
        flags = java.util.Arrays.copyOf(flags, n);
        value = java.util.Arrays.copyOf(value, n);
    }

    /** Skips JSON whitespace inside a line (a newline ends the line, so it is not whitespace here). */
    private int ws(int p) {
        byte[] b = buf;
        while (p < limit) {
            byte c = b[p];
            if (c != ' ' && c != '\t' && c != '\r') {
                return p;
            }
            p++;
        }
        return p;
    }

    /** @return the position after the value at {@code p}, or INVALID / INCOMPLETE */
    private int value(int p) {
        if (p >= limit) {
            return INCOMPLETE;
        }
        byte c = buf[p];
        switch (c) {
            case '{':
                return object(p);
            case '[':
                return array(p);
            case '"': {
                int i = add(STR, p + 1);
                int q = string(p + 1, i);
                if (q < 0) {
                    return q;
                }
                end[i] = q - 1;
                next[i] = size;
                return q;
            }
            case 't':
                return literal(p, TRUE, 't', 'r', 'u', 'e');
            case 'f':
                return literal(p, FALSE, 'f', 'a', 'l', 's', 'e');
            case 'n':
                return literal(p, NULL, 'n', 'u', 'l', 'l');
            default:
                if (c == '-' || (c >= '0' && c <= '9')) {
                    return number(p);
                }
                return INVALID;
        }
    }

    private int literal(int p, byte k, char... text) {
        if (p + text.length > limit) {
            for (int j = 0; p + j < limit; j++) {
                if (buf[p + j] != text[j]) {
                    return INVALID;
                }
            }
            return INCOMPLETE;
        }
        for (int j = 0; j < text.length; j++) {
            if (buf[p + j] != text[j]) {
                return INVALID;
            }
        }
        int i = add(k, p);
        end[i] = p + text.length;
        next[i] = size;
        return p + text.length;
    }

    private int object(int p) {
        if (++depth > MAX_DEPTH) {
            return INVALID;
        }
        int i = add(OBJ, p);
        p = ws(p + 1);
        if (p >= limit) {
            return INCOMPLETE;
        }
        int members = 0;
        if (buf[p] == '}') {
            p++;
        } else {
            for (; ; ) {
                if (p >= limit) {
                    return INCOMPLETE;
                }
                if (buf[p] != '"') {
                    return INVALID;
                }
                int k = add(STR, p + 1);
                int q = string(p + 1, k);
                if (q < 0) {
                    return q;
                }
                end[k] = q - 1;
                next[k] = size;
                p = ws(q);
                if (p >= limit) {
                    return INCOMPLETE;
                }
                if (buf[p] != ':') {
                    return INVALID;
                }
                p = value(ws(p + 1));
                if (p < 0) {
                    return p;
                }
                members++;
                p = ws(p);
                if (p >= limit) {
                    return INCOMPLETE;
                }
                byte c = buf[p];
                if (c == ',') {
                    p = ws(p + 1);
                } else if (c == '}') {
                    p++;
                    break;
                } else {
                    return INVALID;
                }
            }
        }
        depth--;
        count[i] = members;
        end[i] = p;
        next[i] = size;
        return p;
    }

    private int array(int p) {
        if (++depth > MAX_DEPTH) {
            return INVALID;
        }
        int i = add(ARR, p);
        p = ws(p + 1);
        if (p >= limit) {
            return INCOMPLETE;
        }
        int elements = 0;
        if (buf[p] == ']') {
            p++;
        } else {
            for (; ; ) {
                p = value(p);
                if (p < 0) {
                    return p;
                }
                elements++;
                p = ws(p);
                if (p >= limit) {
                    return INCOMPLETE;
                }
                byte c = buf[p];
                if (c == ',') {
                    p = ws(p + 1);
                } else if (c == ']') {
                    p++;
                    break;
                } else {
                    return INVALID;
                }
            }
        }
        depth--;
        count[i] = elements;
        end[i] = p;
        next[i] = size;
        return p;
    }

    /** Characters that form an escape on their own after a backslash: " \\ / b f n r t. */
    private static final boolean[] SIMPLE_ESCAPE = new boolean[256];

    static {
        for (char c : "\"\\/bfnrt".toCharArray()) {
            SIMPLE_ESCAPE[c] = true;
        }
    }

    /**
     * Scans string content from {@code p} (just after the opening quote), eight bytes at a time up to a quote, a
     * backslash or a control character; an escape is checked and skipped where it stands.
     *
     * @return the position after the closing quote
     */
    private int string(int p, int i) {
        byte[] b = buf;
        int lim = limit;
        long high = 0;
        int f = 0;
        while (p + 8 <= lim) {
            long w = (long) LONG_LE.get(b, p);
            long q = w ^ QUOTES, s = w ^ BACKSLASHES;
            long stop = (((q - ONES) & ~q) | ((s - ONES) & ~s) | ((w - SPACES) & ~w)) & HIGHS;
            if (stop == 0) {
                high |= w;
                p += 8;
                continue;
            }
            int k = firstByte(stop);
            int at = p + k;
            byte c = b[at];
            if (c == '\\') {
                if (at + 1 >= lim) {
                    return INCOMPLETE;
                }
                f |= ESC;
                if (SIMPLE_ESCAPE[b[at + 1] & 0xff]) {
                    high |= w & ~(-1L << (k << 3));
                    p = at + 2;
                    continue;
                }
                if (b[at + 1] != 'u') {
                    return INVALID;
                }
                if (at + 6 > lim) {
                    return INCOMPLETE;
                }
                for (int j = 2; j < 6; j++) {
                    if (!hex(b[at + j])) {
                        return INVALID;
                    }
                }
                high |= w & ~(-1L << (k << 3));
                p = at + 6;
                continue;
            }
            high |= w & ~(-1L << (k << 3));
            if (c == '"') {
                if ((high & HIGHS) != 0) {
                    f |= NON_ASCII;
                }
                flags[i] = f;
                return at + 1;
            }
            return INVALID;
        }
        // the last bytes of the input, one at a time
        for (; ; ) {
            if (p >= lim) {
                return INCOMPLETE;
            }
            byte c = b[p];
            if (c == '"') {
                if ((high & HIGHS) != 0) {
                    f |= NON_ASCII;
                }
                flags[i] = f;
                return p + 1;
            }
            if (c == '\\') {
                if (p + 1 >= lim) {
                    return INCOMPLETE;
                }
                f |= ESC;
                if (SIMPLE_ESCAPE[b[p + 1] & 0xff]) {
                    p += 2;
                    continue;
                }
                if (b[p + 1] != 'u') {
                    return INVALID;
                }
                if (p + 6 > lim) {
                    return INCOMPLETE;
                }
                for (int j = 2; j < 6; j++) {
                    if (!hex(b[p + j])) {
                        return INVALID;
                    }
                }
                p += 6;
                continue;
            }
            if (c >= 0 && c < 0x20) {
                return INVALID;
            }
            if (c < 0) {
                high |= 0x80;
            }
            p++;
        }
    }

    /**
     * The index of the lowest byte whose high bit {@code stop} sets (only high bits set). Multiplication instead of
     * {@link Long#numberOfTrailingZeros}, which the quick compiler (C1, what the launcher runs session commands
     * with) calls rather than inlines: the lowest bit, moved to its byte's low bit, selects byte {@code 7 - k} of
     * {@link #BYTE_INDEX}, which holds {@code k}.
     */
    private static int firstByte(long stop) {
        return (int) ((((stop & -stop) >>> 7) * BYTE_INDEX) >>> 56);
    }

    private static final long BYTE_INDEX = 0x0001020304050607L;

    private static boolean hex(byte c) {
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
    }

    /** -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
    private int number(int p) {
        int s = p;
        byte[] b = buf;
        int lim = limit;
        boolean neg = false;
        if (b[p] == '-') {
            neg = true;
            p++;
            if (p >= lim) {
                return INCOMPLETE;
            }
        }
        int digitsStart = p;
        if (b[p] == '0') {
            p++;
        } else if (b[p] >= '1' && b[p] <= '9') {
            while (p < lim && b[p] >= '0' && b[p] <= '9') {
                p++;
            }
        } else {
            return INVALID;
        }
        int intEnd = p;
        boolean integer = true;
        if (p < lim && b[p] == '.') {
            integer = false;
            p++;
            int d = p;
            while (p < lim && b[p] >= '0' && b[p] <= '9') {
                p++;
            }
            if (p == d) {
                return p >= lim ? INCOMPLETE : INVALID;
            }
        }
        if (p < lim && (b[p] == 'e' || b[p] == 'E')) {
            integer = false;
            p++;
            if (p < lim && (b[p] == '+' || b[p] == '-')) {
                p++;
            }
            int d = p;
            while (p < lim && b[p] >= '0' && b[p] <= '9') {
                p++;
            }
            if (p == d) {
                return p >= lim ? INCOMPLETE : INVALID;
            }
        }
        if (p >= lim) {
            return INCOMPLETE; // a number is only complete once something follows it
        }
        int i = add(NUM, s);
        end[i] = p;
        next[i] = size;
        if (integer && intEnd - digitsStart <= 16) {
            long v = 0;
            for (int j = digitsStart; j < intEnd; j++) {
                v = v * 10 + (b[j] - '0');
            }
            if (v <= Json.MAX_SAFE) {
                value[i] = neg ? -v : v;
                flags[i] = INT;
            }
        }
        return p;
    }

    // ------------------------------------------------------------------ navigation

    /** @return true when string {@code i} has neither escapes nor non-ASCII bytes and equals {@code ascii} */
    boolean isPlain(int i, byte[] ascii) {
        if (kind[i] != STR || flags[i] != 0) {
            return false;
        }
        int s = start[i], n = end[i] - s;
        if (n != ascii.length) {
            return false;
        }
        for (int j = 0; j < n; j++) {
            if (buf[s + j] != ascii[j]) {
                return false;
            }
        }
        return true;
    }

    /** @return true when value {@code i} is a string without escapes or non-ASCII bytes */
    boolean isPlainString(int i) {
        return kind[i] == STR && flags[i] == 0;
    }

    /** @return true when value {@code i} is a string that decodes to a non-empty JavaScript string */
    boolean isNonEmptyString(int i) {
        return kind[i] == STR && end[i] > start[i];
    }

    /** @return true when value {@code i} is an integer literal within the safe-integer range */
    boolean isSafeInt(int i) {
        return kind[i] == NUM && (flags[i] & INT) != 0;
    }

    /** What {@link #lookup} puts for a key the object does not hold, or holds ambiguously. */
    static final int ABSENT = -1, AMBIGUOUS = -2;

    /**
     * Looks the values of {@code keys} up among the members of object {@code obj}, in one pass: {@code out[j]} is the
     * tape index of the value under {@code keys[j]}, {@link #ABSENT}, or {@link #AMBIGUOUS} when the object holds the
     * key twice (JSON.parse keeps the last duplicate; the exact path decides). Keys are plain ASCII.
     *
     * @return the number of members whose key is none of {@code keys} (a key with non-ASCII bytes never equals an
     *     ASCII one), or -1 when a key is escaped (it may decode to one of {@code keys})
     */
    int lookup(int obj, byte[][] keys, int[] out) {
        int nk = keys.length;
        for (int j = 0; j < nk; j++) {
            out[j] = ABSENT;
        }
        int others = 0;
        int k = obj + 1;
        byte[] b = buf;
        for (int m = count[obj]; m > 0; m--) {
            if ((flags[k] & ESC) != 0) {
                return -1;
            }
            int s = start[k], n = end[k] - s;
            int j = 0;
            for (; j < nk; j++) {
                byte[] key = keys[j];
                if (key.length != n) {
                    continue;
                }
                int x = 0;
                while (x < n && b[s + x] == key[x]) {
                    x++;
                }
                if (x == n) {
                    break;
                }
            }
            if (j == nk) {
                others++;
            } else {
                out[j] = out[j] == ABSENT ? k + 1 : AMBIGUOUS;
            }
            k = next[k + 1];
        }
        return others;
    }
}
