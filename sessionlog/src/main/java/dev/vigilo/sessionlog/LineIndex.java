package dev.vigilo.sessionlog;

import static dev.vigilo.sessionlog.EventKinds.*;
import static dev.vigilo.sessionlog.JsonTape.ABSENT;
import static dev.vigilo.sessionlog.JsonTape.AMBIGUOUS;
import static dev.vigilo.sessionlog.JsonTape.ARR;
import static dev.vigilo.sessionlog.JsonTape.NULL;
import static dev.vigilo.sessionlog.JsonTape.NUM;
import static dev.vigilo.sessionlog.JsonTape.OBJ;
import static dev.vigilo.sessionlog.JsonTape.STR;
import static dev.vigilo.sessionlog.JsonTape.TRUE;

import java.nio.charset.StandardCharsets;

/**
 * The lines of one chunk of plaintext with, for each line the fast path understands, the few fields the reader's
 * rules need (a summary); every other line is marked {@link EventKinds#SLOW} and goes through the exact Jackson
 * path. A line is summarized only when the summary carries everything the exact path would do with it: it parses,
 * is one event (not a packed row), passes the envelope, message and vocabulary checks, is not a legacy shape, and
 * its surface operation is a valid append. Built in a worker thread, read by the reader's thread; reused.
 */
final class LineIndex {
    /** Marks an absent turn/step number in {@link #num}. */
    static final long NO_NUMBER = Long.MIN_VALUE;

    int lines;
    int[] lineStart = new int[256];
    /** index of the line's newline */
    int[] lineEnd = new int[256];

    byte[] kind = new byte[256];
    long[] seq = new long[256];
    long[] time = new long[256];
    /** turn (turn/start), step (step/start, assistant/message); {@link #NO_NUMBER} when absent */
    long[] num = new long[256];
    /** a string in the chunk: callId (tool/call, tool/result); -1 when absent */
    int[] refStart = new int[256];

    int[] refLen = new int[256];
    /** tool-call block ids of an assistant/message: [idsFrom, idsTo) into {@link #idStart}/{@link #idLen} */
    int[] idsFrom = new int[256];

    int[] idsTo = new int[256];
    int[] idStart = new int[64];
    int[] idLen = new int[64];
    int ids;
    /** commit record: its epoch, or -1 when the line is not a well-formed commit record */
    long[] commitEpoch = new long[256];
    /** start of the bytes after the last newline (the chunk's length when it ends in a newline) */
    int tail;

    private final JsonTape tape = new JsonTape();
    private final boolean fast;

    /** @param fast summarize lines; false marks every line SLOW (the caller needs the exact path for all) */
    LineIndex(boolean fast) {
        this.fast = fast;
    }

    private static byte[] a(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }

    private static byte[][] keys(String... names) {
        byte[][] out = new byte[names.length][];
        for (int i = 0; i < names.length; i++) {
            out[i] = a(names[i]);
        }
        return out;
    }

    // the keys each check looks up, in one pass per object (positions matter: see the constants below)
    private static final byte[][] ENVELOPE =
            keys("type", "seq", "time", "data", "surfaceOp", "sourceEventSeqs", "ignorable");
    private static final int E_TYPE = 0, E_SEQ = 1, E_TIME = 2, E_DATA = 3, E_OP = 4, E_SOURCES = 5, E_IGNORABLE = 6;
    private static final byte[][] TURN_START_KEYS = keys("turn", "trigger");
    private static final byte[][] STEP_KEYS = keys("step");
    private static final byte[][] CALL_KEYS = keys("callId");
    private static final byte[][] TURN_END_KEYS = keys("turn", "reason");
    private static final byte[][] KIND_KEYS = keys("kind");
    private static final byte[][] COMMIT_KEYS = keys("epoch", "endSeq");
    /** a message: id, role, source, content */
    private static final byte[][] MESSAGE_KEYS = keys("id", "role", "source", "content");

    private static final int M_ID = 0, M_ROLE = 1, M_SOURCE = 2, M_CONTENT = 3;
    private static final byte[][] ASSISTANT_DATA_KEYS = keys("message", "step");
    private static final byte[][] TOOL_DATA_KEYS = keys("message");
    private static final byte[][] MODEL_SOURCE_KEYS = keys("kind", "provider", "model");
    private static final byte[][] TOOL_SOURCE_KEYS = keys("kind", "callId");
    private static final byte[][] BLOCK_KEYS = keys("type", "id");
    private static final byte[][] RESULT_BLOCK_KEYS = keys("type", "content", "toolCallId");

    private static final byte[] APPEND = a("append"),
            USER = a("user"),
            ASSISTANT = a("assistant"),
            MODEL = a("model"),
            TOOL = a("tool"),
            TOOL_RESULT_BLOCK = a("tool-result"),
            TOOL_CALL_BLOCK = a("tool-call");
    private static final byte[][] SIMPLE_END_KINDS = {
        a("completed"), a("blocked"), a("max-tokens"), a("interrupted"), a("disposed")
    };

    /** lookup results, reused */
    private final int[] env = new int[ENVELOPE.length], v = new int[4], w = new int[4], u = new int[4];

    /** Indexes {@code b[0, len)}. */
    void index(byte[] b, int len) {
        lines = 0;
        ids = 0;
        int p = 0;
        while (p < len) {
            int r = fast ? tape.parse(b, p, len) : JsonTape.INVALID;
            int nl;
            if (r >= 0) {
                nl = r;
            } else if (r == JsonTape.INCOMPLETE) {
                nl = -1;
            } else {
                nl = indexOf(b, (byte) '\n', p, len);
            }
            if (nl < 0) {
                break;
            }
            int i = lines;
            if (i == lineStart.length) {
                grow();
            }
            lineStart[i] = p;
            lineEnd[i] = nl;
            kind[i] = SLOW;
            commitEpoch[i] = -1;
            if (r >= 0) {
                classify(i);
            }
            lines++;
            p = nl + 1;
        }
        tail = p;
    }

    static int indexOf(byte[] b, byte x, int from, int to) {
        for (int i = from; i < to; i++) {
            if (b[i] == x) {
                return i;
            }
        }
        return -1;
    }

    private void grow() {
        int n = lineStart.length * 2;
        lineStart = java.util.Arrays.copyOf(lineStart, n);
        lineEnd = java.util.Arrays.copyOf(lineEnd, n);
        kind = java.util.Arrays.copyOf(kind, n);
        seq = java.util.Arrays.copyOf(seq, n);
        time = java.util.Arrays.copyOf(time, n);
        num = java.util.Arrays.copyOf(num, n);
        refStart = java.util.Arrays.copyOf(refStart, n);
        refLen = java.util.Arrays.copyOf(refLen, n);
        idsFrom = java.util.Arrays.copyOf(idsFrom, n);
        idsTo = java.util.Arrays.copyOf(idsTo, n);
        commitEpoch = java.util.Arrays.copyOf(commitEpoch, n);
    }

    private void addId(int start, int len) {
        if (ids == idStart.length) {
            idStart = java.util.Arrays.copyOf(idStart, ids * 2);
            idLen = java.util.Arrays.copyOf(idLen, ids * 2);
        }
        idStart[ids] = start;
        idLen[ids] = len;
        ids++;
    }

    // ------------------------------------------------------------------ classification

    /** Fills line {@code i}'s summary from the tape, or leaves it SLOW. */
    private void classify(int i) {
        JsonTape t = tape;
        if (t.kind[0] != OBJ) {
            return;
        }
        // the envelope: keys within {type, seq, time, data, surfaceOp, sourceEventSeqs, ignorable}, each once
        if (t.lookup(0, ENVELOPE, env) != 0) {
            return; // another key (or a packed row's seq0/time0), or escaped
        }
        int type = env[E_TYPE], seqV = env[E_SEQ], timeV = env[E_TIME], data = env[E_DATA];
        int op = env[E_OP], sources = env[E_SOURCES], ignorable = env[E_IGNORABLE];
        if (type < 0
                || seqV < 0
                || timeV < 0
                || data < 0
                || sources == AMBIGUOUS
                || op == AMBIGUOUS
                || ignorable == AMBIGUOUS) {
            return;
        }
        if (!t.isPlainString(type)) {
            return;
        }
        if (!t.isSafeInt(seqV) || t.value[seqV] < 0 || t.buf[t.start[seqV]] == '-') {
            return;
        }
        if (!t.isSafeInt(timeV)) {
            return;
        }
        if (ignorable >= 0 && t.kind[ignorable] != TRUE) {
            return;
        }
        byte code = EventKinds.of(t.buf, t.start[type], t.end[type] - t.start[type]);
        boolean surface = code == TOOL_RESULT || code == USER_MESSAGE || code == ASSISTANT_MESSAGE;
        if (surface) {
            if (op < 0 || !t.isPlain(op, APPEND)) {
                return;
            }
            if (sources >= 0 && !validSources(sources, t.value[seqV], code == ASSISTANT_MESSAGE)) {
                return;
            }
        } else if (op >= 0 || sources >= 0) {
            return;
        }
        num[i] = NO_NUMBER;
        refStart[i] = -1;
        idsFrom[i] = idsTo[i] = ids;
        if (!check(code, i, data, ignorable >= 0, t.value[seqV])) {
            return;
        }
        kind[i] = code == COMMIT ? UNKNOWN : code;
        seq[i] = t.value[seqV];
        time[i] = t.value[timeV];
    }

    /** The type's own rules (beyond the envelope); false leaves the line to the exact path. */
    private boolean check(byte code, int i, int d, boolean ignorable, long seq) {
        JsonTape t = tape;
        switch (code) {
            case UNKNOWN:
                return ignorable;
            case COMMIT:
                return ignorable && commit(i, d, seq);
            case TURN_START:
                if (t.kind[d] == NULL) {
                    return false;
                }
                if (t.kind[d] != OBJ) {
                    return true;
                }
                if (t.lookup(d, TURN_START_KEYS, v) < 0 || v[1] != ABSENT) {
                    return false;
                }
                return number(i, v[0]);
            case STEP_START:
                if (t.kind[d] == NULL) {
                    return false;
                }
                if (t.kind[d] != OBJ) {
                    return true;
                }
                return t.lookup(d, STEP_KEYS, v) >= 0 && number(i, v[0]);
            case TURN_END:
                return t.kind[d] != OBJ || simpleTurnEnd(d);
            case TOOL_CALL:
                if (t.kind[d] == NULL) {
                    return false;
                }
                if (t.kind[d] != OBJ) {
                    return true;
                }
                if (t.lookup(d, CALL_KEYS, v) < 0 || v[0] == AMBIGUOUS) {
                    return false;
                }
                int c = v[0];
                if (c >= 0 && t.kind[c] == STR) {
                    if (!t.isPlainString(c)) {
                        return false;
                    }
                    refStart[i] = t.start[c];
                    refLen[i] = t.end[c] - t.start[c];
                }
                return true;
            case USER_MESSAGE:
                return userMessage(d);
            case ASSISTANT_MESSAGE:
                return assistantMessage(i, d);
            case TOOL_RESULT:
                return toolResult(i, d);
            case OTHER:
            case STEP_END:
                return true;
            default: // SLOW
                return false;
        }
    }

    /** sourceEventSeqs: an array of distinct non-negative safe integers below the event's seq (non-empty unless allowed). */
    private boolean validSources(int arr, long seq, boolean emptyAllowed) {
        JsonTape t = tape;
        if (t.kind[arr] != ARR) {
            return false;
        }
        int n = t.count[arr];
        if (n == 0) {
            return emptyAllowed;
        }
        if (n > 8) {
            return false; // the exact path checks long lists
        }
        int e = arr + 1;
        for (int m = 0; m < n; m++) {
            if (!t.isSafeInt(e) || t.value[e] < 0 || t.value[e] >= seq || t.buf[t.start[e]] == '-') {
                return false;
            }
            int o = arr + 1;
            for (int j = 0; j < m; j++) {
                if (t.value[o] == t.value[e]) {
                    return false;
                }
                o = t.next[o];
            }
            e = t.next[e];
        }
        return true;
    }

    /** A turn/step number: absent, or a non-negative safe integer, into num[i]; false when it is something else. */
    private boolean number(int i, int value) {
        JsonTape t = tape;
        if (value == ABSENT) {
            return true;
        }
        if (value < 0 || !t.isSafeInt(value) || t.buf[t.start[value]] == '-') {
            return false;
        }
        num[i] = t.value[value];
        return true;
    }

    /** {turn: safe int >= 1, reason: {kind: one of the kinds that allow no other key}} and nothing else. */
    private boolean simpleTurnEnd(int d) {
        JsonTape t = tape;
        if (t.count[d] != 2 || t.lookup(d, TURN_END_KEYS, v) != 0) {
            return false;
        }
        int turn = v[0], reason = v[1];
        if (turn < 0 || reason < 0) {
            return false; // both present once, and nothing else: exactly these two keys
        }
        if (!t.isSafeInt(turn) || t.value[turn] < 1) {
            return false;
        }
        if (t.kind[reason] != OBJ || t.count[reason] != 1 || t.lookup(reason, KIND_KEYS, w) != 0) {
            return false;
        }
        int kind = w[0];
        if (kind < 0) {
            return false;
        }
        for (byte[] k : SIMPLE_END_KINDS) {
            if (t.isPlain(kind, k)) {
                return true;
            }
        }
        return false;
    }

    /** The commit record's data: epoch and endSeq safe integers, endSeq equal to seq; false: let the exact path decide. */
    private boolean commit(int i, int d, long seq) {
        JsonTape t = tape;
        if (t.kind[d] != OBJ) {
            return true; // not a commit record, an ordinary ignorable event
        }
        if (t.lookup(d, COMMIT_KEYS, v) < 0) {
            return false;
        }
        int epoch = v[0], end = v[1];
        if (epoch == AMBIGUOUS || end == AMBIGUOUS) {
            return false;
        }
        if (epoch == ABSENT || end == ABSENT || t.kind[epoch] != NUM || t.kind[end] != NUM) {
            return true;
        }
        if (!t.isSafeInt(epoch) || !t.isSafeInt(end) || t.buf[t.start[epoch]] == '-') {
            return false;
        }
        if (t.value[end] == seq) {
            commitEpoch[i] = t.value[epoch];
        }
        return true;
    }

    /** A message's id (non-empty), role (as given), source (an object) and content (an array); false otherwise. */
    private boolean message(int msg, byte[] role, int[] out) {
        JsonTape t = tape;
        if (t.kind[msg] != OBJ || t.lookup(msg, MESSAGE_KEYS, out) < 0) {
            return false;
        }
        int id = out[M_ID], r = out[M_ROLE], source = out[M_SOURCE], content = out[M_CONTENT];
        return id >= 0
                && t.isNonEmptyString(id)
                && r >= 0
                && t.isPlain(r, role)
                && source >= 0
                && t.kind[source] == OBJ
                && content >= 0
                && t.kind[content] == ARR;
    }

    /** user/message: data is the message {id: non-empty, role: "user", source: {kind: non-empty}, content: []}. */
    private boolean userMessage(int d) {
        JsonTape t = tape;
        if (!message(d, USER, v)) {
            return false;
        }
        if (t.lookup(v[M_SOURCE], KIND_KEYS, w) < 0) {
            return false;
        }
        return w[0] >= 0 && t.isNonEmptyString(w[0]);
    }

    /** assistant/message: data.message with model source; records data.step and the tool-call block ids. */
    private boolean assistantMessage(int i, int d) {
        JsonTape t = tape;
        if (t.kind[d] != OBJ || t.lookup(d, ASSISTANT_DATA_KEYS, u) < 0) {
            return false;
        }
        int msg = u[0];
        if (msg < 0 || u[1] == AMBIGUOUS || !message(msg, ASSISTANT, v)) {
            return false;
        }
        if (t.lookup(v[M_SOURCE], MODEL_SOURCE_KEYS, w) < 0) {
            return false;
        }
        int kind = w[0], provider = w[1], model = w[2];
        if (kind < 0 || !t.isPlain(kind, MODEL)) {
            return false;
        }
        if (provider < 0 || !t.isNonEmptyString(provider) || model < 0 || !t.isNonEmptyString(model)) {
            return false;
        }
        if (!number(i, u[1])) {
            return false;
        }
        int content = v[M_CONTENT];
        int e = content + 1;
        for (int m = 0; m < t.count[content]; m++) {
            if (t.kind[e] == OBJ) {
                if (t.lookup(e, BLOCK_KEYS, w) < 0) {
                    return false;
                }
                int type = w[0], cid = w[1];
                if (type == AMBIGUOUS) {
                    return false;
                }
                if (type >= 0 && t.kind[type] == STR) {
                    if (!t.isPlainString(type)) {
                        return false;
                    }
                    if (t.isPlain(type, TOOL_CALL_BLOCK) && cid != ABSENT) {
                        if (cid < 0 || !t.isPlainString(cid)) {
                            return false;
                        }
                        addId(t.start[cid], t.end[cid] - t.start[cid]);
                    }
                }
            }
            e = t.next[e];
        }
        idsTo[i] = ids;
        return true;
    }

    /**
     * tool/result: data.message {id, role "user", source {kind "tool", callId}, content: [one tool-result block
     * with a content array and the same toolCallId]}; records the callId.
     */
    private boolean toolResult(int i, int d) {
        JsonTape t = tape;
        if (t.kind[d] != OBJ || t.lookup(d, TOOL_DATA_KEYS, u) < 0 || u[0] < 0) {
            return false;
        }
        if (!message(u[0], USER, v)) {
            return false;
        }
        if (t.lookup(v[M_SOURCE], TOOL_SOURCE_KEYS, w) < 0) {
            return false;
        }
        int kind = w[0], callId = w[1];
        if (kind < 0 || !t.isPlain(kind, TOOL)) {
            return false;
        }
        if (callId < 0 || !t.isPlainString(callId) || t.end[callId] == t.start[callId]) {
            return false;
        }
        int content = v[M_CONTENT];
        if (t.count[content] != 1) {
            return false;
        }
        int block = content + 1;
        if (t.kind[block] != OBJ || t.lookup(block, RESULT_BLOCK_KEYS, u) < 0) {
            return false;
        }
        int type = u[0], inner = u[1], toolCallId = u[2];
        if (type < 0 || !t.isPlain(type, TOOL_RESULT_BLOCK) || inner < 0 || t.kind[inner] != ARR) {
            return false;
        }
        if (toolCallId < 0 || !t.isPlainString(toolCallId)) {
            return false;
        }
        int cs = t.start[callId], cn = t.end[callId] - cs;
        if (t.end[toolCallId] - t.start[toolCallId] != cn
                || !java.util.Arrays.equals(t.buf, cs, cs + cn, t.buf, t.start[toolCallId], t.start[toolCallId] + cn)) {
            return false;
        }
        refStart[i] = cs;
        refLen[i] = cn;
        return true;
    }
}
