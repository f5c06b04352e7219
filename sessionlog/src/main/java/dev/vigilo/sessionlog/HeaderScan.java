package dev.vigilo.sessionlog;

import java.nio.charset.StandardCharsets;

/**
 * The header line's rules ({@link EventRules#parseHeader}) on the byte-level tape, for the common header: plain keys
 * and values, the version 0. It builds no tree, so a clean log is read without starting Jackson's data binding;
 * any other header goes to {@link EventRules#parseHeader}, which decides exactly.
 */
final class HeaderScan {
    private HeaderScan() {}

    private static byte[][] keys(String... names) {
        byte[][] out = new byte[names.length][];
        for (int i = 0; i < names.length; i++) {
            out[i] = names[i].getBytes(StandardCharsets.US_ASCII);
        }
        return out;
    }

    private static final byte[][] KEYS = keys(
            "type",
            "version",
            "id",
            "createdAt",
            "delegationDepth",
            "origin",
            "agentPreset",
            "sandboxMode",
            "approvalPolicy",
            "cwd",
            "parentSession",
            "seedLength");
    private static final int TYPE = 0,
            VERSION = 1,
            ID = 2,
            CREATED = 3,
            DEPTH = 4,
            ORIGIN = 5,
            PRESET = 6,
            SANDBOX = 7,
            APPROVAL = 8,
            CWD = 9,
            PARENT = 10,
            SEED = 11;
    private static final byte[] SESSION = "session".getBytes(StandardCharsets.US_ASCII),
            SUBAGENT = "subagent".getBytes(StandardCharsets.US_ASCII);

    /**
     * Checks the header line {@code b[0, len)} (its newline included).
     *
     * @return the session id, or null when the exact path must decide
     * @throws CorruptSessionLogException when the header is a negative zero where the published reader requires
     *     a non-negative number ({@code createdAt}, {@code delegationDepth}: it rejects {@code -0}, which a tree of
     *     numbers cannot tell from 0)
     */
    static String sessionId(byte[] b, int len) {
        JsonTape t = new JsonTape();
        if (t.parse(b, 0, len) != len - 1 || t.kind[0] != JsonTape.OBJ) {
            return null;
        }
        int[] v = new int[KEYS.length];
        if (t.lookup(0, KEYS, v) < 0) {
            return null;
        }
        for (int x : v) {
            if (x == JsonTape.AMBIGUOUS) {
                return null;
            }
        }
        // a version other than 0 is refused before any other rule: the exact path says so
        if (v[VERSION] < 0 || !t.isSafeInt(v[VERSION]) || t.value[v[VERSION]] != 0) {
            return null;
        }
        if (negativeZero(t, v[CREATED]) || negativeZero(t, v[DEPTH])) {
            throw new CorruptSessionLogException("corrupt session log: first line is not a session header", 0);
        }
        boolean ok = v[TYPE] >= 0
                && t.isPlain(v[TYPE], SESSION)
                && v[ID] >= 0
                && t.isPlainString(v[ID])
                && t.end[v[ID]] > t.start[v[ID]]
                && nonNegative(t, v[CREATED])
                && nonNegative(t, v[DEPTH])
                && (v[ORIGIN] == JsonTape.ABSENT || t.isPlain(v[ORIGIN], SUBAGENT))
                && (v[PRESET] == JsonTape.ABSENT || t.kind[v[PRESET]] == JsonTape.STR)
                && v[SANDBOX] == JsonTape.ABSENT
                && v[APPROVAL] == JsonTape.ABSENT
                && (v[CWD] == JsonTape.ABSENT
                        || (t.isPlainString(v[CWD]) && t.end[v[CWD]] > t.start[v[CWD]] && b[t.start[v[CWD]]] == '/'))
                && (v[PARENT] == JsonTape.ABSENT || t.kind[v[PARENT]] == JsonTape.STR)
                && (v[SEED] == JsonTape.ABSENT || nonNegative(t, v[SEED]));
        if (!ok) {
            return null;
        }
        return new String(b, t.start[v[ID]], t.end[v[ID]] - t.start[v[ID]], StandardCharsets.US_ASCII);
    }

    private static boolean nonNegative(JsonTape t, int i) {
        return i >= 0 && t.isSafeInt(i) && t.buf[t.start[i]] != '-';
    }

    /** A number literal that is zero with a minus sign ({@code -0}, {@code -0.0}, {@code -0e5}). */
    private static boolean negativeZero(JsonTape t, int i) {
        if (i < 0 || t.kind[i] != JsonTape.NUM || t.buf[t.start[i]] != '-') {
            return false;
        }
        for (int j = t.start[i] + 1; j < t.end[i]; j++) {
            byte c = t.buf[j];
            if (c == 'e' || c == 'E') {
                break;
            }
            if (c >= '1' && c <= '9') {
                return false;
            }
        }
        return true;
    }
}
