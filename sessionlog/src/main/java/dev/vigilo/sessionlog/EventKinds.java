package dev.vigilo.sessionlog;

import java.nio.charset.StandardCharsets;

/**
 * The event types the fast row path distinguishes, looked up from a type string's raw bytes without building a
 * String. Types whose rules are not mirrored by the fast path map to {@link #SLOW}.
 */
final class EventKinds {
    /** Not handled by the fast path: the exact Jackson path decides. */
    static final byte SLOW = 0;

    static final byte TURN_START = 1,
            TURN_END = 2,
            STEP_START = 3,
            STEP_END = 4,
            TOOL_CALL = 5,
            TOOL_RESULT = 6,
            USER_MESSAGE = 7,
            ASSISTANT_MESSAGE = 8,
            /** a known type with no rule beyond the envelope */
            OTHER = 9,
            /** a type outside the vocabulary: accepted only when ignorable */
            UNKNOWN = 10,
            /** the P1 commit record type (outside the vocabulary) */
            COMMIT = 11;

    private static final int SIZE = 256;
    private static final byte[][] KEYS = new byte[SIZE][];
    private static final byte[] CODES = new byte[SIZE];

    static {
        for (String t : EventRules.KNOWN_TYPES) {
            put(t, OTHER);
        }
        put("turn/start", TURN_START);
        put("turn/end", TURN_END);
        put("step/start", STEP_START);
        put("step/end", STEP_END);
        put("tool/call", TOOL_CALL);
        put("tool/result", TOOL_RESULT);
        put("user/message", USER_MESSAGE);
        put("assistant/message", ASSISTANT_MESSAGE);
        put(CommitRecord.TYPE, COMMIT);
        // rules the fast path does not mirror
        for (String t : new String[] {
            "request/header",
            "request/header-delta",
            "mode/set",
            "steering/message",
            "text-chunks",
            "reasoning-chunks",
            "tool-call-chunks"
        }) {
            put(t, SLOW);
        }
    }

    private EventKinds() {}

    private static void put(String type, byte code) {
        byte[] k = type.getBytes(StandardCharsets.US_ASCII);
        int h = hash(k, 0, k.length) & (SIZE - 1);
        while (KEYS[h] != null && !java.util.Arrays.equals(KEYS[h], k)) {
            h = (h + 1) & (SIZE - 1);
        }
        KEYS[h] = k;
        CODES[h] = code;
    }

    private static int hash(byte[] b, int off, int len) {
        int h = len;
        for (int i = 0; i < len; i++) {
            h = h * 31 + b[off + i];
        }
        return h ^ (h >>> 11);
    }

    /** @return the kind of the plain ASCII type string {@code b[off, off+len)}: {@link #UNKNOWN} when not listed */
    static byte of(byte[] b, int off, int len) {
        int h = hash(b, off, len) & (SIZE - 1);
        for (; ; ) {
            byte[] k = KEYS[h];
            if (k == null) {
                return UNKNOWN;
            }
            if (k.length == len && java.util.Arrays.equals(k, 0, len, b, off, off + len)) {
                return CODES[h];
            }
            h = (h + 1) & (SIZE - 1);
        }
    }
}
