package dev.vigilo.sessionlog;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Set;

/**
 * Streaming form of the published surface fold that Session.fromRestore replays over every restored event
 * (SurfaceManager.validateNext: surfaceOpOf, assertProvenance, replacementRange, assertToolResultRewrite). It
 * keeps the current model-visible surface as a list of seqs and, for each current tool/result node, what a
 * tool/result replacement must preserve: a SHA-256 digest of its data with the result content blanked. Events
 * folded by the fast row path keep only a locator of the stored event instead; the digest is computed from the
 * event read back when (rarely) a replacement targets it.
 * <p>Memory: 8 bytes per current surface node plus ~24 bytes per current tool/result node folded fast (~100 for
 * one folded from a built event); the rules need this state (a replace may name any current node), the published
 * reader holds the whole log instead.
 * Envelope shape (surfaceOp shape, surface eligibility) is checked by {@link EventRules#validateStored} first.
 */
final class SurfaceFold {
    /** Reads back a stored event the fast row path folded without building it (a replace may need it later). */
    interface Resolver {
        /** @return the stored event at {@code locator} (as parsed by {@link Json#parseLine}) */
        JsonNode event(long locator);
    }

    private long[] nodes;
    private int size;
    /**
     * seq of a current tool/result surface node -> where its facts are: a locator (>= 0) of the stored event, read
     * back through the {@link Resolver} only when a replace targets the node, or -(i + 1) for {@link #known}[i]
     */
    private final LongLongMap toolResults;
    /** facts of tool/result nodes folded from a built event */
    private final List<ToolResult> known = new ArrayList<>();

    private Resolver resolver;

    /**
     * What a tool/result replacement must preserve: the digest of its data with the result content blanked, and
     * the message id (which a legacy tool/result rewrite inherits).
     */
    private record ToolResult(byte[] digest, String messageId) {}

    /** How to take back one applied event (the writer refuses an append without disturbing the fold). */
    private record Undo(int index, long seq, long[] removed, long[] refs) {}

    /** non-null while the writer validates a batch: one entry per applied surface event */
    private List<Undo> undo;

    SurfaceFold() {
        this(256, 64);
    }

    /**
     * The room made at first (both grow): small for the many short logs a worker encodes at once (a transcript per
     * call in flight: 3 KiB each with a log file's room), large for a log file.
     *
     * @param nodes       surface nodes
     * @param toolResults tool results' table size, a power of two of at least 4
     */
    SurfaceFold(int nodes, int toolResults) {
        this.nodes = new long[nodes];
        this.toolResults = new LongLongMap(toolResults);
    }

    /** Sets how locators given to {@link #appendFast} are read back. */
    void resolver(Resolver r) {
        this.resolver = r;
    }

    /** Starts recording applied events so they can be taken back ({@link #rollbackTo}). */
    void begin() {
        undo = new ArrayList<>();
    }

    /** @return a mark for {@link #rollbackTo}: the events applied since {@link #begin} */
    int mark() {
        return undo.size();
    }

    /** Takes back the events applied after {@code mark}, newest first. */
    void rollbackTo(int mark) {
        for (int i = undo.size() - 1; i >= mark; i--) {
            Undo u = undo.remove(i);
            toolResults.remove(u.seq);
            // remove the event's node at u.index, re-insert what it shadowed
            int n = u.removed.length;
            long[] tail = Arrays.copyOfRange(nodes, u.index + 1, size);
            size = u.index;
            for (int k = 0; k < n; k++) {
                push(u.removed[k]);
                if (u.refs[k] != LongLongMap.MISSING) {
                    toolResults.put(u.removed[k], u.refs[k]);
                }
            }
            for (long t : tail) {
                push(t);
            }
        }
    }

    /** Stops recording: the applied events are final. */
    void commit() {
        undo = null;
    }

    private void record(int index, long seq, int from, int to) {
        if (undo == null) {
            return;
        }
        int n = to < from ? 0 : to - from + 1;
        long[] removed = new long[n];
        long[] refs = new long[n];
        for (int k = 0; k < n; k++) {
            removed[k] = nodes[from + k];
            refs[k] = toolResults.get(removed[k]);
        }
        undo.add(new Undo(index, seq, removed, refs));
    }

    /** @return the message id of the current tool/result surface node {@code seq}, or null */
    String toolResultMessageId(long seq) {
        long ref = toolResults.get(seq);
        if (ref == LongLongMap.MISSING) {
            return null;
        }
        return facts(ref).messageId();
    }

    private ToolResult facts(long ref) {
        if (ref < 0) {
            return known.get((int) (-ref - 1));
        }
        JsonNode data = resolver.event(ref).get("data");
        return new ToolResult(restDigest(data), data.get("message").get("id").textValue());
    }

    /**
     * Applies an event the fast row path checked: a valid append (its sourceEventSeqs already checked).
     *
     * @param locator where the event can be read back through the resolver when it is a tool/result
     */
    void appendFast(long seq, boolean toolResult, long locator) {
        record(size, seq, 0, -1);
        push(seq);
        if (toolResult) {
            toolResults.put(seq, locator);
        }
    }

    /** Validates {@code e} (a stored event that passed validateStored) against the fold and applies it. */
    void accept(JsonNode e, Where at) {
        String type = e.get("type").textValue();
        JsonNode op = e.get("surfaceOp");
        if (op == null) {
            return; // not surface-eligible (validateStored refused surface metadata on those)
        }
        long seq = Json.safeLong(e.get("seq"));
        Set<Long> sources = sources(e, type, seq, at);
        if (op.isTextual()) { // "append"
            record(size, seq, 0, -1);
            push(seq);
            if (type.equals("tool/result")) {
                putToolResult(seq, e.get("data"), restDigest(e.get("data")));
            }
            return;
        }
        long start = Json.safeLong(op.get("start")), end = Json.safeLong(op.get("end"));
        int startIdx = indexOf(start), endIdx = indexOf(end);
        if (startIdx < 0) {
            throw bad("surface replace: start seq " + start + " not found in surface", seq, at);
        }
        if (endIdx < 0) {
            throw bad("surface replace: end seq " + end + " not found in surface", seq, at);
        }
        if (startIdx > endIdx) {
            throw bad(
                    "surface replace: start seq " + start + " (index " + startIdx + ") is after end seq " + end
                            + " (index " + endIdx + ")",
                    seq,
                    at);
        }
        List<Long> missing = new ArrayList<>();
        for (int i = startIdx; i <= endIdx; i++) {
            if (!sources.contains(nodes[i])) {
                missing.add(nodes[i]);
            }
        }
        if (!missing.isEmpty()) {
            throw bad(
                    "surface replace: sourceEventSeqs must include every shadowed surface node; missing "
                            + join(missing),
                    seq,
                    at);
        }
        byte[] rest = null;
        if (type.equals("tool/result")) {
            if (endIdx != startIdx) {
                throw bad("tool/result surface replacement must rewrite exactly one current node", seq, at);
            }
            long ref = toolResults.get(nodes[startIdx]);
            if (ref == LongLongMap.MISSING) {
                throw bad("tool/result surface replacement must target a current tool/result", seq, at);
            }
            rest = restDigest(e.get("data"));
            if (!Arrays.equals(facts(ref).digest(), rest)) {
                throw bad("tool/result surface replacement may change only content", seq, at);
            }
        }
        record(startIdx, seq, startIdx, endIdx);
        for (int i = startIdx; i <= endIdx; i++) {
            toolResults.remove(nodes[i]);
        }
        splice(startIdx, endIdx, seq);
        if (rest != null) {
            putToolResult(seq, e.get("data"), rest);
        }
    }

    private void putToolResult(long seq, JsonNode data, byte[] rest) {
        known.add(new ToolResult(rest, data.get("message").get("id").textValue()));
        toolResults.put(seq, -known.size());
    }

    /** assertProvenance's event-local part: the cited seqs, checked for shape, duplicates and order. */
    private static Set<Long> sources(JsonNode e, String type, long seq, Where at) {
        JsonNode raw = e.get("sourceEventSeqs");
        if (raw == null) {
            return Set.of();
        }
        if (!raw.isArray()) {
            throw bad("sourceEventSeqs on event at seq " + seq + " must be an array when present", seq, at);
        }
        if (raw.isEmpty() && !type.equals("assistant/message")) {
            throw bad("sourceEventSeqs must not be empty except on assistant/message", seq, at);
        }
        Set<Long> out = new HashSet<>();
        Long nonEarlier = null;
        for (JsonNode s : raw) {
            if (!Json.isSafeInteger(s) || Json.safeLong(s) < 0) {
                throw bad(
                        "session event \"" + type
                                + "\" sourceEventSeqs must densely contain non-negative safe integers",
                        seq,
                        at);
            }
            long v = Json.safeLong(s);
            out.add(v);
            if (nonEarlier == null && v >= seq) {
                nonEarlier = v;
            }
        }
        if (out.size() != raw.size()) {
            throw bad("sourceEventSeqs must not contain duplicates", seq, at);
        }
        if (nonEarlier != null) {
            throw bad(
                    "sourceEventSeqs must reference earlier events: " + nonEarlier + " >= current seq " + seq, seq, at);
        }
        return out;
    }

    private int indexOf(long seq) {
        for (int i = 0; i < size; i++) {
            if (nodes[i] == seq) {
                return i;
            }
        }
        return -1;
    }

    private void push(long seq) {
        if (size == nodes.length) {
            nodes = Arrays.copyOf(nodes, size * 2);
        }
        nodes[size++] = seq;
    }

    /** nodes.splice(from, to - from + 1, seq) */
    private void splice(int from, int to, long seq) {
        nodes[from] = seq;
        int removed = to - from;
        System.arraycopy(nodes, to + 1, nodes, from + 1, size - to - 1);
        size -= removed;
    }

    /**
     * Digest of a tool/result's data with {@code message.content[0].content} set to null, in a canonical JSON
     * form (keys sorted, numbers by double value) so equal digests mean isDeepEqualJson-equal values.
     */
    static byte[] restDigest(JsonNode data) {
        StringBuilder sb = new StringBuilder();
        canonical(data, sb, 0);
        try {
            return MessageDigest.getInstance("SHA-256").digest(sb.toString().getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException x) {
            throw new IllegalStateException("SHA-256 is a mandatory JCA algorithm", x);
        }
    }

    // depth: 0 = data, 1 = data.message, 2 = data.message.content, 3 = content[0]; only that path is blanked
    private static void canonical(JsonNode n, StringBuilder sb, int depth) {
        if (n.isObject()) {
            List<String> keys = new ArrayList<>();
            for (Iterator<String> it = n.fieldNames(); it.hasNext(); ) {
                keys.add(it.next());
            }
            keys.sort(null);
            sb.append('{');
            for (String k : keys) {
                sb.append(Json.MAPPER.getNodeFactory().textNode(k)).append(':');
                JsonNode v = n.get(k);
                if (depth == 3 && k.equals("content")) {
                    sb.append("null");
                } else if ((depth == 0 && k.equals("message")) || (depth == 1 && k.equals("content"))) {
                    canonical(v, sb, depth + 1);
                } else {
                    canonical(v, sb, -1);
                }
                sb.append(',');
            }
            sb.append('}');
        } else if (n.isArray()) {
            sb.append('[');
            for (int i = 0; i < n.size(); i++) {
                canonical(n.get(i), sb, depth == 2 && i == 0 ? 3 : -1);
                sb.append(',');
            }
            sb.append(']');
        } else if (n.isNumber()) {
            double d = n.doubleValue(); // JSON.parse keeps doubles; === compares them (0 === -0)
            sb.append(d == 0 ? "0" : Double.toString(d));
        } else {
            sb.append(n); // string (escaped), boolean, null
        }
    }

    private static String join(List<Long> seqs) {
        StringBuilder sb = new StringBuilder();
        for (Long s : seqs) {
            sb.append(sb.length() == 0 ? "" : ", ").append(s);
        }
        return sb.toString();
    }

    private static CorruptSessionLogException bad(String what, long seq, Where at) {
        return new CorruptSessionLogException(
                "invalid stored event at seq " + seq + " (" + at + "): " + what, at.offset());
    }
}
