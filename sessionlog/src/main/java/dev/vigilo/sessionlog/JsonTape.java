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
        if (from >= limit) return INCOMPLETE;
        int p = value(from);
        if (p < 0) return p;
        while (p < limit) {
            byte c = b[p];
            if (c == '\n') return p;
            if (c != ' ' && c != '\t' && c != '\r') return INVALID;
            p++;
        }
        return INCOMPLETE;
    }

    private int add(byte k, int s) {
        if (size == kind.length) grow();
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
            if (c != ' ' && c != '\t' && c != '\r') return p;
            p++;
        }
        return p;
    }

    /** @return the position after the value at {@code p}, or INVALID / INCOMPLETE */
    private int value(int p) {
        if (p >= limit) return INCOMPLETE;
        byte c = buf[p];
        switch (c) {
            case '{':
                return object(p);
            case '[':
                return array(p);
            case '"': {
                int i = add(STR, p + 1);
                int q = string(p + 1, i);
                if (q < 0) return q;
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
                if (c == '-' || (c >= '0' && c <= '9')) return number(p);
                return INVALID;
        }
    }

    private int literal(int p, byte k, char... text) {
        if (p + text.length > limit) {
            for (int j = 0; p + j < limit; j++) if (buf[p + j] != text[j]) return INVALID;
            return INCOMPLETE;
        }
        for (int j = 0; j < text.length; j++) if (buf[p + j] != text[j]) return INVALID;
        int i = add(k, p);
        end[i] = p + text.length;
        next[i] = size;
        return p + text.length;
    }

    private int object(int p) {
        if (++depth > MAX_DEPTH) return INVALID;
        int i = add(OBJ, p);
        p = ws(p + 1);
        if (p >= limit) return INCOMPLETE;
        int members = 0;
        if (buf[p] == '}') {
            p++;
        } else {
            for (; ; ) {
                if (p >= limit) return INCOMPLETE;
                if (buf[p] != '"') return INVALID;
                int k = add(STR, p + 1);
                int q = string(p + 1, k);
                if (q < 0) return q;
                end[k] = q - 1;
                next[k] = size;
                p = ws(q);
                if (p >= limit) return INCOMPLETE;
                if (buf[p] != ':') return INVALID;
                p = value(ws(p + 1));
                if (p < 0) return p;
                members++;
                p = ws(p);
                if (p >= limit) return INCOMPLETE;
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
        if (++depth > MAX_DEPTH) return INVALID;
        int i = add(ARR, p);
        p = ws(p + 1);
        if (p >= limit) return INCOMPLETE;
        int elements = 0;
        if (buf[p] == ']') {
            p++;
        } else {
            for (; ; ) {
                p = value(p);
                if (p < 0) return p;
                elements++;
                p = ws(p);
                if (p >= limit) return INCOMPLETE;
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

    /**
     * Scans string content from {@code p} (just after the opening quote); eight bytes at a time until a quote, a
     * backslash or a control character.
     *
     * @return the position after the closing quote
     */
    private int string(int p, int i) {
        byte[] b = buf;
        int lim = limit;
        long high = 0;
        int f = 0;
        for (; ; ) {
            while (p + 8 <= lim) {
                long w = (long) LONG_LE.get(b, p);
                long q = w ^ QUOTES, s = w ^ BACKSLASHES;
                long stop = ((q - ONES) & ~q) | ((s - ONES) & ~s) | ((w - SPACES) & ~w);
                stop &= HIGHS;
                if (stop != 0) {
                    int k = Long.numberOfTrailingZeros(stop) >>> 3;
                    // only the bytes before the stop count for the non-ASCII flag
                    high |= k == 0 ? 0 : w & (HIGHS >>> (8 * (8 - k)));
                    p += k;
                    break;
                }
                high |= w;
                p += 8;
            }
            if (p >= lim) return INCOMPLETE;
            byte c = b[p];
            if (c == '"') {
                if ((high & HIGHS) != 0) f |= NON_ASCII;
                flags[i] = f;
                return p + 1;
            }
            if (c == '\\') {
                if (p + 1 >= lim) return INCOMPLETE;
                byte e = b[p + 1];
                if (e == 'u') {
                    if (p + 6 > lim) return INCOMPLETE;
                    for (int j = 2; j < 6; j++) if (!hex(b[p + j])) return INVALID;
                    p += 6;
                } else if (e == '"' || e == '\\' || e == '/' || e == 'b' || e == 'f' || e == 'n' || e == 'r'
                        || e == 't') {
                    p += 2;
                } else {
                    return INVALID;
                }
                f |= ESC;
                continue;
            }
            if (c >= 0 && c < 0x20) return INVALID; // control character (a newline included)
            if (c < 0) high |= 0x80; // a byte >= 0x80 reached by the byte loop near the end
            p++;
        }
    }

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
            if (p >= lim) return INCOMPLETE;
        }
        int digitsStart = p;
        if (b[p] == '0') {
            p++;
        } else if (b[p] >= '1' && b[p] <= '9') {
            while (p < lim && b[p] >= '0' && b[p] <= '9') p++;
        } else {
            return INVALID;
        }
        int intEnd = p;
        boolean integer = true;
        if (p < lim && b[p] == '.') {
            integer = false;
            p++;
            int d = p;
            while (p < lim && b[p] >= '0' && b[p] <= '9') p++;
            if (p == d) return p >= lim ? INCOMPLETE : INVALID;
        }
        if (p < lim && (b[p] == 'e' || b[p] == 'E')) {
            integer = false;
            p++;
            if (p < lim && (b[p] == '+' || b[p] == '-')) p++;
            int d = p;
            while (p < lim && b[p] >= '0' && b[p] <= '9') p++;
            if (p == d) return p >= lim ? INCOMPLETE : INVALID;
        }
        if (p >= lim) return INCOMPLETE; // a number is only complete once something follows it
        int i = add(NUM, s);
        end[i] = p;
        next[i] = size;
        if (integer && intEnd - digitsStart <= 16) {
            long v = 0;
            for (int j = digitsStart; j < intEnd; j++) v = v * 10 + (b[j] - '0');
            if (v <= Json.MAX_SAFE) {
                value[i] = neg ? -v : v;
                flags[i] = INT;
            }
        }
        return p;
    }

    // ------------------------------------------------------------------ navigation

    /** Index of the first member key of object {@code obj} (keys and values alternate), or size if none. */
    static int firstKey(int obj) {
        return obj + 1;
    }

    /** @return true when string {@code i} has neither escapes nor non-ASCII bytes and equals {@code ascii} */
    boolean isPlain(int i, byte[] ascii) {
        if (kind[i] != STR || flags[i] != 0) return false;
        int s = start[i], n = end[i] - s;
        if (n != ascii.length) return false;
        for (int j = 0; j < n; j++) if (buf[s + j] != ascii[j]) return false;
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

    /** Looks a key up among the members of object {@code obj}. */
    static final int ABSENT = -1, AMBIGUOUS = -2;

    /**
     * @return the tape index of the value under {@code key}, {@link #ABSENT}, or {@link #AMBIGUOUS} when the object
     *     holds the key twice or has an escaped key (JSON.parse keeps the last duplicate; the exact path decides)
     */
    int get(int obj, byte[] key) {
        int found = ABSENT;
        int k = obj + 1;
        for (int m = 0; m < count[obj]; m++) {
            // an escaped key may decode to `key`; a key with non-ASCII bytes never decodes to an ASCII one
            if ((flags[k] & ESC) != 0) return AMBIGUOUS;
            if (equalsKey(k, key)) {
                if (found != ABSENT) return AMBIGUOUS;
                found = k + 1;
            }
            k = next[k + 1];
        }
        return found;
    }

    private boolean equalsKey(int k, byte[] key) {
        int s = start[k], n = end[k] - s;
        if (n != key.length) return false;
        for (int j = 0; j < n; j++) if (buf[s + j] != key[j]) return false;
        return true;
    }

    /**
     * @return true when object {@code obj} has no key twice, judged on keys that are plain ASCII (an escaped or
     *     non-ASCII key makes this false: two different byte strings may decode to the same key)
     */
    boolean distinctKeys(int obj) {
        int n = count[obj];
        if (n <= 1) return n == 0 || flags[obj + 1] == 0;
        int k = obj + 1;
        for (int m = 0; m < n; m++) {
            if (flags[k] != 0) return false;
            int other = next[k + 1];
            for (int o = m + 1; o < n; o++) {
                if (sameBytes(k, other)) return false;
                other = next[other + 1];
            }
            k = next[k + 1];
        }
        return true;
    }

    private boolean sameBytes(int a, int b) {
        int sa = start[a], na = end[a] - sa, sb = start[b];
        if (na != end[b] - sb) return false;
        for (int j = 0; j < na; j++) if (buf[sa + j] != buf[sb + j]) return false;
        return true;
    }
}
