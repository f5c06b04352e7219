package dev.vigilo.web;

import com.fasterxml.jackson.core.io.JsonStringEncoder;
import com.fasterxml.jackson.databind.JsonNode;
import dev.vigilo.sessionlog.VerifyReport;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.function.Function;

/**
 * The reading view's one pass over a transcript: every committed event, streamed by the session-log reader from the
 * first, is counted, and the pass keeps only what one page shows. Pages are fixed windows of {@link #PAGE_EVENTS}
 * events in log order (page 1 is events 1 to 200), so "page N of M" is the same page on every visit. Besides the
 * page's events the pass keeps the scoring events wherever they are (evaluators, judges' calls, gates, a limit), the
 * place of the final answer (the last {@code vigilo/output}, else the last assistant message) and, given a query, the
 * first {@link #MAX_HITS} events whose text contains it.
 *
 * <p>Bounded memory whatever the log's length: one window of events, each kept to at most
 * {@link Transcript#MAX_EVENT_BYTES} and the window to about {@link Transcript#MAX_PAGE_BYTES} (events past that are
 * kept cut, as an oversized event is); at most {@link #MAX_SCORING_EVENTS} scoring events; one line of at most
 * {@link #MAX_LINE_BYTES} being read; the hits. Cost: the reader's pass over the whole log (it must reach the end for
 * its verdict anyway); per event, a look at the start of its line for its type, and a byte search when a query is
 * given. Only the page's events, the scoring events and candidate hits are parsed.
 */
final class TranscriptScan {
    static final int PAGE_EVENTS = 200;
    /** Hits listed for a search; a search finding more says so. */
    static final int MAX_HITS = 50;
    /** Longest query searched. */
    static final int MAX_QUERY = 200;
    /** Scoring events kept: a panel of judges with a few attempts each ({@link JudgeCalls#MAX_EVENTS}), evaluators. */
    static final int MAX_SCORING_EVENTS = 512;
    /** The part of one line read for its type, a search and parsing; a longer event is kept cut. */
    static final int MAX_LINE_BYTES = 1024 * 1024;
    /** What an event kept cut shows once the window is over its byte budget. */
    static final int CUT_BYTES = 2 * 1024;

    private static final Set<String> SCORING =
            Set.of("vigilo/evaluator", JudgeCalls.REQUEST, JudgeCalls.RESPONSE, "vigilo/gates", "vigilo/limit");
    private static final byte[] TYPE_PREFIX = "{\"type\":\"".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] SEQ_KEY = "\"seq\":".getBytes(StandardCharsets.US_ASCII);

    /**
     * What to show.
     *
     * @param page   the page wanted (from 1; past the last, the last)
     * @param target an event's seq: when given, the page holding the first event at or after it, instead of {@code page}
     * @param query  text to search for (case-insensitive), at most {@link #MAX_QUERY} characters
     */
    record Request(long page, OptionalLong target, Optional<String> query) {
        Request {
            if (page < 1) {
                throw new IllegalArgumentException("page " + page + " < 1");
            }
            query = query.map(String::strip).filter(q -> !q.isEmpty());
            if (query.isPresent() && query.get().length() > MAX_QUERY) {
                throw new IllegalArgumentException("query over " + MAX_QUERY + " characters");
            }
        }
    }

    /**
     * An event whose text contains the query.
     *
     * @param snippet the text around the first place it occurs
     */
    record Hit(long seq, long page, String type, String snippet) {}

    /**
     * An event to link to, and the page it is on.
     *
     * @param output whether it is the attempt's recorded output ({@code vigilo/output}) rather than an assistant message
     */
    record Place(long seq, long page, boolean output) {}

    /**
     * What one pass found.
     *
     * @param total    committed events in the log
     * @param page     the page shown (from 1)
     * @param events   its events, in order
     * @param scoring  the scoring events of the whole log, in order
     * @param answer   where the final answer is, when the log has one
     * @param hits     the first {@link #MAX_HITS} hits of the query, in order
     * @param moreHits whether more events contain the query
     */
    record Result(
            VerifyReport report,
            long total,
            long page,
            List<Transcript.Event> events,
            List<Transcript.Event> scoring,
            Optional<Place> answer,
            List<Hit> hits,
            boolean moreHits) {
        /** Pages in the log (at least 1: an empty log has one empty page). */
        long pages() {
            return Math.max(1, (total + PAGE_EVENTS - 1) / PAGE_EVENTS);
        }
    }

    private TranscriptScan() {}

    /**
     * Reads a transcript once: {@code reader} streams its committed events from seq 0 as JSON lines into the given
     * stream and returns the log's verdict (a file through {@code SessionCat}, a run's transcript through
     * {@code RunTranscripts}).
     */
    static Result scan(Function<OutputStream, VerifyReport> reader, Request request) {
        Collector c = new Collector(request);
        VerifyReport report = reader.apply(c);
        c.finish();
        List<Transcript.Event> events = new ArrayList<>(c.window.size());
        for (Raw r : c.window) {
            events.add(r.event());
        }
        Optional<Place> answer = c.output != null ? Optional.of(c.output) : Optional.ofNullable(c.lastAssistant);
        return new Result(report, c.ordinal, c.windowPage, events, c.scoring, answer, c.hits, c.moreHits);
    }

    /** One line of the window, kept as bytes until the window is chosen: only the shown page is parsed. */
    private record Raw(byte[] bytes, long length, boolean cut) {
        Transcript.Event event() {
            JsonNode json = null;
            if (!cut) {
                try {
                    json = StoredJson.read(bytes);
                } catch (IOException e) {
                    // shown as text below
                }
            }
            if (json != null) {
                return new Transcript.Event(json.path("seq").asLong(-1), json, null, length);
            }
            String text = new String(bytes, StandardCharsets.UTF_8);
            return new Transcript.Event(Transcript.seqOf(text), null, text, length);
        }
    }

    /** Splits the reader's output into lines and looks at each once. */
    private static final class Collector extends LineSplitter {
        private final Request request;
        private final byte[] needle;
        private final String query;
        private byte[] line = new byte[8 * 1024];
        private int lineLength;
        private long lineBytes;

        private long ordinal;
        private final List<Raw> window = new ArrayList<>();
        private long windowPage = 1;
        private long windowBytes;
        private boolean frozen;

        private final List<Transcript.Event> scoring = new ArrayList<>();
        private Place output;
        private Place lastAssistant;
        private final List<Hit> hits = new ArrayList<>();
        private boolean moreHits;

        Collector(Request request) {
            this.request = request;
            this.query = request.query().map(q -> q.toLowerCase(Locale.ROOT)).orElse(null);
            // A query is looked for in the line's JSON bytes as JSON writes it (quotes and backslashes escaped), ASCII
            // letters in either case; a match is then confirmed in the parsed event's text.
            this.needle = query == null
                    ? null
                    : lowerAscii(JsonStringEncoder.getInstance()
                            .quoteAsUTF8(request.query().get()));
        }

        @Override
        void append(byte[] b, int off, int len) {
            lineBytes += len;
            int room = (int) Math.min(len, MAX_LINE_BYTES - lineLength);
            if (room <= 0) {
                return;
            }
            if (lineLength + room > line.length) {
                line = Arrays.copyOf(line, Math.max(lineLength + room, Math.min(MAX_LINE_BYTES, line.length * 2)));
            }
            System.arraycopy(b, off, line, lineLength, room);
            lineLength += room;
        }

        @Override
        void endLine() {
            long index = ordinal++;
            long page = index / PAGE_EVENTS + 1;
            String type = type();
            JsonNode parsed = null;
            boolean whole = lineBytes == lineLength;
            if (type != null && SCORING.contains(type) && scoring.size() < MAX_SCORING_EVENTS && whole) {
                parsed = parse();
                if (parsed != null) {
                    scoring.add(new Transcript.Event(parsed.path("seq").asLong(-1), parsed, null, lineBytes));
                }
            }
            if ("vigilo/output".equals(type)) {
                output = new Place(seq(), page, true);
            } else if ("assistant/message".equals(type)) {
                lastAssistant = new Place(seq(), page, false);
            }
            if (needle != null && !moreHits && contains(line, lineLength, needle)) {
                if (parsed == null && whole) {
                    parsed = parse();
                }
                String snippet = parsed != null ? Search.snippet(parsed.path("data"), query) : null;
                if (snippet != null) {
                    if (hits.size() < MAX_HITS) {
                        hits.add(new Hit(parsed.path("seq").asLong(-1), page, type == null ? "?" : type, snippet));
                    } else {
                        moreHits = true;
                    }
                }
            }
            window(index, page);
            lineLength = 0;
            lineBytes = 0;
        }

        /** Keeps the line when it belongs to the window shown: the page asked for, or the one holding the target. */
        private void window(long index, long page) {
            if (index % PAGE_EVENTS == 0 && !frozen) {
                window.clear();
                windowBytes = 0;
                windowPage = page;
            }
            if (frozen && page != windowPage) {
                return;
            }
            boolean cut = lineBytes > Transcript.MAX_EVENT_BYTES || windowBytes >= Transcript.MAX_PAGE_BYTES;
            int keep = cut ? Math.min(lineLength, CUT_BYTES) : lineLength;
            window.add(new Raw(Arrays.copyOf(line, keep), lineBytes, cut));
            windowBytes += keep;
            if (!frozen) {
                if (request.target().isPresent()) {
                    long seq = seq();
                    frozen = seq >= request.target().getAsLong();
                } else {
                    frozen = page == request.page();
                }
            }
        }

        /** After the last line: a window never frozen is the last page (a page or a target past the end). */
        void finish() {
            if (lineLength > 0) {
                endLine();
            }
            if (ordinal == 0) {
                windowPage = 1;
            }
        }

        /** The event's type from the start of its line, as the writers store it ({@code {"type":"..."}), else parsed. */
        private String type() {
            if (startsWith(line, lineLength, TYPE_PREFIX)) {
                for (int i = TYPE_PREFIX.length; i < lineLength; i++) {
                    if (line[i] == '"') {
                        return new String(line, TYPE_PREFIX.length, i - TYPE_PREFIX.length, StandardCharsets.UTF_8);
                    }
                    if (line[i] == '\\') {
                        break;
                    }
                }
            }
            JsonNode j = lineBytes == lineLength ? parse() : null;
            return j == null ? null : j.path("type").textValue();
        }

        /** The event's seq: the first {@code "seq":} of its line, where the writers store it; else parsed. */
        private long seq() {
            int at = indexOf(line, Math.min(lineLength, 512), SEQ_KEY);
            if (at >= 0) {
                long v = 0;
                int digits = 0;
                for (int i = at + SEQ_KEY.length; i < lineLength && digits < 18; i++, digits++) {
                    byte b = line[i];
                    if (b < '0' || b > '9') {
                        break;
                    }
                    v = v * 10 + (b - '0');
                }
                if (digits > 0) {
                    return v;
                }
            }
            JsonNode j = lineBytes == lineLength ? parse() : null;
            return j == null ? -1 : j.path("seq").asLong(-1);
        }

        private JsonNode parse() {
            try {
                return StoredJson.read(Arrays.copyOf(line, lineLength));
            } catch (IOException e) {
                return null;
            }
        }
    }

    private static byte[] lowerAscii(byte[] b) {
        byte[] out = b.clone();
        for (int i = 0; i < out.length; i++) {
            if (out[i] >= 'A' && out[i] <= 'Z') {
                out[i] += 'a' - 'A';
            }
        }
        return out;
    }

    private static boolean startsWith(byte[] b, int length, byte[] prefix) {
        if (length < prefix.length) {
            return false;
        }
        for (int i = 0; i < prefix.length; i++) {
            if (b[i] != prefix[i]) {
                return false;
            }
        }
        return true;
    }

    private static int indexOf(byte[] b, int length, byte[] n) {
        outer:
        for (int i = 0; i + n.length <= length; i++) {
            for (int k = 0; k < n.length; k++) {
                if (b[i + k] != n[k]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }

    /** Whether {@code b} holds {@code lowerNeedle}, ASCII letters of {@code b} compared in lower case. */
    static boolean contains(byte[] b, int length, byte[] lowerNeedle) {
        if (lowerNeedle.length == 0) {
            return false;
        }
        byte first = lowerNeedle[0];
        outer:
        for (int i = 0; i + lowerNeedle.length <= length; i++) {
            if (lower(b[i]) != first) {
                continue;
            }
            for (int k = 1; k < lowerNeedle.length; k++) {
                if (lower(b[i + k]) != lowerNeedle[k]) {
                    continue outer;
                }
            }
            return true;
        }
        return false;
    }

    private static byte lower(byte c) {
        return c >= 'A' && c <= 'Z' ? (byte) (c + ('a' - 'A')) : c;
    }

    /** The text values of an event, searched for a query confirmed in its bytes. */
    static final class Search {
        /** Characters of text shown on each side of a hit. */
        static final int AROUND = 80;

        private Search() {}

        /** The text around the first text value holding {@code lowerQuery}; null when none does (a key matched). */
        static String snippet(JsonNode node, String lowerQuery) {
            if (node.isTextual()) {
                String original = node.asText();
                String lowered = original.toLowerCase(Locale.ROOT);
                // Indexes of the lowered text; a text whose length lowering changes is shown lowered.
                String text = lowered.length() == original.length() ? original : lowered;
                int at = lowered.indexOf(lowerQuery);
                if (at < 0) {
                    return null;
                }
                int from = Math.max(0, at - AROUND);
                int to = Math.min(text.length(), at + lowerQuery.length() + AROUND);
                return (from > 0 ? "…" : "")
                        + text.substring(from, to).replace('\n', ' ')
                        + (to < text.length() ? "…" : "");
            }
            for (Iterator<JsonNode> it = node.elements(); it.hasNext(); ) {
                String s = snippet(it.next(), lowerQuery);
                if (s != null) {
                    return s;
                }
            }
            return null;
        }
    }
}
