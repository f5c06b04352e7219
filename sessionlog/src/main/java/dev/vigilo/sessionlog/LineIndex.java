package dev.vigilo.sessionlog;

import static dev.vigilo.sessionlog.EventKinds.*;
import static dev.vigilo.sessionlog.JsonTape.ABSENT;
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

    private static final byte[] TYPE = a("type"),
            SEQ = a("seq"),
            TIME = a("time"),
            DATA = a("data"),
            SURFACE_OP = a("surfaceOp"),
            SOURCES = a("sourceEventSeqs"),
            IGNORABLE = a("ignorable"),
            TURN = a("turn"),
            STEP = a("step"),
            TRIGGER = a("trigger"),
            REASON = a("reason"),
            KIND = a("kind"),
            CALL_ID = a("callId"),
            MESSAGE = a("message"),
            ID = a("id"),
            ROLE = a("role"),
            SOURCE = a("source"),
            CONTENT = a("content"),
            PROVIDER = a("provider"),
            MODEL = a("model"),
            TOOL_CALL_ID = a("toolCallId"),
            EPOCH = a("epoch"),
            END_SEQ = a("endSeq"),
            APPEND = a("append"),
            USER = a("user"),
            ASSISTANT = a("assistant"),
            TOOL = a("tool"),
            TOOL_RESULT_BLOCK = a("tool-result"),
            TOOL_CALL_BLOCK = a("tool-call");
    private static final byte[][] SIMPLE_END_KINDS = {
        a("completed"), a("blocked"), a("max-tokens"), a("interrupted"), a("disposed")
    };

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
            if (nl < 0) break;
            int i = lines;
            if (i == lineStart.length) grow();
            lineStart[i] = p;
            lineEnd[i] = nl;
            kind[i] = SLOW;
            commitEpoch[i] = -1;
            if (r >= 0) classify(i);
            lines++;
            p = nl + 1;
        }
        tail = p;
    }

    static int indexOf(byte[] b, byte x, int from, int to) {
        for (int i = from; i < to; i++) if (b[i] == x) return i;
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
        if (t.kind[0] != OBJ) return;
        // the envelope: keys within {type, seq, time, data, surfaceOp, sourceEventSeqs, ignorable}, each once
        int type = -1, seqV = -1, timeV = -1, data = -1, op = -1, sources = -1, ignorable = -1;
        int k = 1;
        for (int m = 0; m < t.count[0]; m++) {
            if (t.flags[k] != 0) return;
            int v = k + 1;
            int s = t.start[k], n = t.end[k] - s;
            byte[] b = t.buf;
            int slot;
            if (is(b, s, n, TYPE)) slot = type = type < 0 ? v : -2;
            else if (is(b, s, n, SEQ)) slot = seqV = seqV < 0 ? v : -2;
            else if (is(b, s, n, TIME)) slot = timeV = timeV < 0 ? v : -2;
            else if (is(b, s, n, DATA)) slot = data = data < 0 ? v : -2;
            else if (is(b, s, n, SURFACE_OP)) slot = op = op < 0 ? v : -2;
            else if (is(b, s, n, SOURCES)) slot = sources = sources < 0 ? v : -2;
            else if (is(b, s, n, IGNORABLE)) slot = ignorable = ignorable < 0 ? v : -2;
            else return; // not an envelope key (or a packed row's seq0/time0)
            if (slot == -2) return; // duplicate key: JSON.parse keeps the last one
            k = t.next[v];
        }
        if (type < 0 || seqV < 0 || timeV < 0 || data < 0 || sources == -2 || op == -2 || ignorable == -2) return;
        if (!t.isPlainString(type)) return;
        if (!t.isSafeInt(seqV) || t.value[seqV] < 0 || t.buf[t.start[seqV]] == '-') return;
        if (!t.isSafeInt(timeV)) return;
        if (ignorable >= 0 && t.kind[ignorable] != TRUE) return;
        byte code = EventKinds.of(t.buf, t.start[type], t.end[type] - t.start[type]);
        boolean surface = code == TOOL_RESULT || code == USER_MESSAGE || code == ASSISTANT_MESSAGE;
        if (surface) {
            if (op < 0 || !t.isPlain(op, APPEND)) return;
            if (sources >= 0 && !validSources(sources, t.value[seqV], code == ASSISTANT_MESSAGE)) return;
        } else if (op >= 0 || sources >= 0) {
            return;
        }
        num[i] = NO_NUMBER;
        refStart[i] = -1;
        idsFrom[i] = idsTo[i] = ids;
        int d = data;
        switch (code) {
            case SLOW:
                return;
            case UNKNOWN:
                if (ignorable < 0) return;
                break;
            case COMMIT:
                if (ignorable < 0) return;
                if (!commit(i, d, t.value[seqV])) return;
                code = UNKNOWN;
                break;
            case TURN_START:
            case STEP_START:
                if (t.kind[d] == NULL) return;
                if (t.kind[d] == OBJ) {
                    if (code == TURN_START && t.get(d, TRIGGER) != ABSENT) return;
                    if (!number(i, d, code == TURN_START ? TURN : STEP)) return;
                }
                break;
            case TURN_END:
                if (t.kind[d] == OBJ && !simpleTurnEnd(d)) return;
                break;
            case TOOL_CALL:
                if (t.kind[d] == NULL) return;
                if (t.kind[d] == OBJ) {
                    int c = t.get(d, CALL_ID);
                    if (c < ABSENT) return;
                    if (c >= 0 && t.kind[c] == STR) {
                        if (!t.isPlainString(c)) return;
                        refStart[i] = t.start[c];
                        refLen[i] = t.end[c] - t.start[c];
                    }
                }
                break;
            case USER_MESSAGE:
                if (!userMessage(d)) return;
                break;
            case ASSISTANT_MESSAGE:
                if (!assistantMessage(i, d)) return;
                break;
            case TOOL_RESULT:
                if (!toolResult(i, d)) return;
                break;
            default: // OTHER, STEP_END
                break;
        }
        kind[i] = code;
        seq[i] = t.value[seqV];
        time[i] = t.value[timeV];
    }

    private static boolean is(byte[] b, int s, int n, byte[] key) {
        if (n != key.length) return false;
        for (int j = 0; j < n; j++) if (b[s + j] != key[j]) return false;
        return true;
    }

    /** sourceEventSeqs: an array of distinct non-negative safe integers below the event's seq (non-empty unless allowed). */
    private boolean validSources(int arr, long seq, boolean emptyAllowed) {
        JsonTape t = tape;
        if (t.kind[arr] != ARR) return false;
        int n = t.count[arr];
        if (n == 0) return emptyAllowed;
        if (n > 8) return false; // the exact path checks long lists
        int e = arr + 1;
        for (int m = 0; m < n; m++) {
            if (!t.isSafeInt(e) || t.value[e] < 0 || t.value[e] >= seq || t.buf[t.start[e]] == '-') return false;
            int o = arr + 1;
            for (int j = 0; j < m; j++) {
                if (t.value[o] == t.value[e]) return false;
                o = t.next[o];
            }
            e = t.next[e];
        }
        return true;
    }

    /** data.{key} as a safe integer or absent, into num[i]; false when it is something else. */
    private boolean number(int i, int obj, byte[] key) {
        JsonTape t = tape;
        int v = t.get(obj, key);
        if (v == ABSENT) return true;
        if (v < 0 || !t.isSafeInt(v) || t.buf[t.start[v]] == '-') return false;
        num[i] = t.value[v];
        return true;
    }

    /** {turn: safe int >= 1, reason: {kind: one of the kinds that allow no other key}} and nothing else. */
    private boolean simpleTurnEnd(int d) {
        JsonTape t = tape;
        if (t.count[d] != 2 || !t.distinctKeys(d)) return false;
        int turn = t.get(d, TURN), reason = t.get(d, REASON);
        if (turn < 0 || reason < 0) return false;
        if (!t.isSafeInt(turn) || t.value[turn] < 1) return false;
        if (t.kind[reason] != OBJ || t.count[reason] != 1) return false;
        int kind = t.get(reason, KIND);
        if (kind < 0) return false;
        for (byte[] k : SIMPLE_END_KINDS) if (t.isPlain(kind, k)) return true;
        return false;
    }

    /** The commit record's data: epoch and endSeq safe integers, endSeq equal to seq; false: let the exact path decide. */
    private boolean commit(int i, int d, long seq) {
        JsonTape t = tape;
        if (t.kind[d] != OBJ) return true; // not a commit record, an ordinary ignorable event
        int epoch = t.get(d, EPOCH), end = t.get(d, END_SEQ);
        if (epoch < ABSENT || end < ABSENT) return false;
        if (epoch == ABSENT || end == ABSENT || t.kind[epoch] != NUM || t.kind[end] != NUM) return true;
        if (!t.isSafeInt(epoch) || !t.isSafeInt(end)) return false;
        if (t.value[epoch] >= 0 && t.buf[t.start[epoch]] != '-' && t.value[end] == seq) commitEpoch[i] = t.value[epoch];
        return true;
    }

    /** user/message: data is the message {id: non-empty, role: "user", source: {kind: non-empty}, content: []}. */
    private boolean userMessage(int d) {
        JsonTape t = tape;
        if (t.kind[d] != OBJ || !t.distinctKeys(d)) return false;
        int id = t.get(d, ID), role = t.get(d, ROLE), source = t.get(d, SOURCE), content = t.get(d, CONTENT);
        if (id < 0 || !t.isNonEmptyString(id) || role < 0 || !t.isPlain(role, USER)) return false;
        if (source < 0 || t.kind[source] != OBJ || !t.distinctKeys(source)) return false;
        int kind = t.get(source, KIND);
        return kind >= 0 && t.isNonEmptyString(kind) && content >= 0 && t.kind[content] == ARR;
    }

    /** assistant/message: data.message with model source; records data.step and the tool-call block ids. */
    private boolean assistantMessage(int i, int d) {
        JsonTape t = tape;
        if (t.kind[d] != OBJ || !t.distinctKeys(d)) return false;
        int msg = t.get(d, MESSAGE);
        if (msg < 0 || t.kind[msg] != OBJ || !t.distinctKeys(msg)) return false;
        int id = t.get(msg, ID), role = t.get(msg, ROLE), source = t.get(msg, SOURCE), content = t.get(msg, CONTENT);
        if (id < 0 || !t.isNonEmptyString(id) || role < 0 || !t.isPlain(role, ASSISTANT)) return false;
        if (source < 0 || t.kind[source] != OBJ || !t.distinctKeys(source)) return false;
        int kind = t.get(source, KIND), provider = t.get(source, PROVIDER), model = t.get(source, MODEL);
        if (kind < 0 || !t.isPlain(kind, MODEL)) return false;
        if (provider < 0 || !t.isNonEmptyString(provider) || model < 0 || !t.isNonEmptyString(model)) return false;
        if (content < 0 || t.kind[content] != ARR) return false;
        if (!number(i, d, STEP)) return false;
        int e = content + 1;
        for (int m = 0; m < t.count[content]; m++) {
            if (t.kind[e] == OBJ) {
                int type = t.get(e, TYPE);
                if (type < ABSENT) return false;
                if (type >= 0 && t.kind[type] == STR) {
                    if (!t.isPlainString(type)) return false;
                    if (t.isPlain(type, TOOL_CALL_BLOCK)) {
                        int cid = t.get(e, ID);
                        if (cid < ABSENT) return false;
                        if (cid >= 0) {
                            if (!t.isPlainString(cid)) return false;
                            addId(t.start[cid], t.end[cid] - t.start[cid]);
                        }
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
        if (t.kind[d] != OBJ || !t.distinctKeys(d)) return false;
        int msg = t.get(d, MESSAGE);
        if (msg < 0 || t.kind[msg] != OBJ || !t.distinctKeys(msg)) return false;
        int id = t.get(msg, ID), role = t.get(msg, ROLE), source = t.get(msg, SOURCE), content = t.get(msg, CONTENT);
        if (id < 0 || !t.isNonEmptyString(id) || role < 0 || !t.isPlain(role, USER)) return false;
        if (source < 0 || t.kind[source] != OBJ || !t.distinctKeys(source)) return false;
        int kind = t.get(source, KIND), callId = t.get(source, CALL_ID);
        if (kind < 0 || !t.isPlain(kind, TOOL)) return false;
        if (callId < 0 || !t.isPlainString(callId) || t.end[callId] == t.start[callId]) return false;
        if (content < 0 || t.kind[content] != ARR || t.count[content] != 1) return false;
        int block = content + 1;
        if (t.kind[block] != OBJ || !t.distinctKeys(block)) return false;
        int type = t.get(block, TYPE), inner = t.get(block, CONTENT), toolCallId = t.get(block, TOOL_CALL_ID);
        if (type < 0 || !t.isPlain(type, TOOL_RESULT_BLOCK) || inner < 0 || t.kind[inner] != ARR) return false;
        if (toolCallId < 0 || !t.isPlainString(toolCallId)) return false;
        int cs = t.start[callId], cn = t.end[callId] - cs;
        if (t.end[toolCallId] - t.start[toolCallId] != cn
                || !java.util.Arrays.equals(t.buf, cs, cs + cn, t.buf, t.start[toolCallId], t.start[toolCallId] + cn))
            return false;
        refStart[i] = cs;
        refLen[i] = cn;
        return true;
    }
}
