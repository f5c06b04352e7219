package dev.vigilo.web;

import com.fasterxml.jackson.databind.JsonNode;
import dev.vigilo.sessionlog.SessionCat;
import dev.vigilo.sessionlog.VerifyReport;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * One page of a session log's committed events, read with the session-log reader ({@link SessionCat}: the same
 * verdict, high watermark, fencing and torn-tail rules as {@code vigilo session verify|cat}). Bounded memory: at most
 * {@code limit} events of at most {@value #MAX_EVENT_BYTES} bytes each are kept (longer ones are kept cut, unparsed)
 * and at most {@value #MAX_PAGE_BYTES} bytes in all; the rest of the log is read and dropped.
 */
final class Transcript {
    static final int MAX_EVENT_BYTES = 256 * 1024;
    static final int MAX_PAGE_BYTES = 4 * 1024 * 1024;

    /**
     * One stored event: parsed JSON, or, for an oversized one, its first bytes as text.
     *
     * @param bytes the event's full length in bytes
     */
    record Event(long seq, JsonNode json, String cut, long bytes) {}

    private static final java.util.regex.Pattern SEQ = java.util.regex.Pattern.compile("\"seq0?\"\\s*:\\s*(\\d{1,18})");

    /** The seq of an event kept cut: its envelope's seq is near the start of the line. */
    static long seqOf(String prefix) {
        java.util.regex.Matcher m = SEQ.matcher(prefix.substring(0, Math.min(prefix.length(), 512)));
        return m.find() ? Long.parseLong(m.group(1)) : -1;
    }

    /**
     * @param report   the log's verdict and accounting
     * @param events   committed events from {@code from}, in order
     * @param nextFrom the seq the next page starts at; empty at the end of the log
     */
    record Page(VerifyReport report, long from, List<Event> events, OptionalLong nextFrom) {}

    private Transcript() {}

    static Page read(Path file, long from, int limit) {
        return read(out -> SessionCat.cat(file, from, out).report(), from, limit);
    }

    /**
     * One page of what {@code reader} writes: a session-log reader that streams the committed events from
     * {@code from} on as JSON lines into the given stream and returns its verdict (a run's transcript read through
     * {@code RunTranscripts}, or a file through {@link SessionCat}).
     */
    static Page read(Function<OutputStream, VerifyReport> reader, long from, int limit) {
        return read(reader, from, limit, e -> true);
    }

    /**
     * As {@link #read(Function, long, int)}, keeping only the events {@code keep} accepts (an event kept cut, not
     * parsed, is offered as null): the others are read and dropped, and count against neither limit.
     */
    static Page read(Function<OutputStream, VerifyReport> reader, long from, int limit, Predicate<JsonNode> keep) {
        Collector c = new Collector(limit, keep);
        VerifyReport report = reader.apply(c);
        OptionalLong next = OptionalLong.empty();
        if (c.more && !c.events.isEmpty()) {
            long seq = c.events.get(c.events.size() - 1).seq();
            next = seq >= 0 ? OptionalLong.of(seq + 1) : OptionalLong.empty();
        }
        return new Page(report, from, c.events, next);
    }

    /** Splits the cat output into lines and keeps what the page needs. */
    private static final class Collector extends LineSplitter {
        private final int limit;
        private final Predicate<JsonNode> keep;
        private final List<Event> events = new ArrayList<>();
        private final ByteArrayOutputStream line = new ByteArrayOutputStream();
        private long lineBytes;
        private long pageBytes;
        private boolean more;

        Collector(int limit, Predicate<JsonNode> keep) {
            this.limit = limit;
            this.keep = keep;
        }

        private boolean full() {
            return events.size() >= limit || pageBytes >= MAX_PAGE_BYTES;
        }

        @Override
        void append(byte[] b, int off, int len) {
            lineBytes += len;
            if (full()) {
                return;
            }
            int room = (int) Math.max(0, Math.min(len, MAX_EVENT_BYTES - line.size()));
            line.write(b, off, room);
        }

        @Override
        void endLine() {
            if (full()) {
                more = true;
            } else {
                byte[] bytes = line.toByteArray();
                pageBytes += bytes.length;
                String text = null;
                JsonNode json = null;
                if (lineBytes <= MAX_EVENT_BYTES) {
                    try {
                        json = StoredJson.read(bytes);
                    } catch (IOException e) {
                        // kept as text below
                    }
                }
                if (json == null) {
                    text = new String(bytes, StandardCharsets.UTF_8);
                }
                if (json != null ? keep.test(json) : keep.test(null)) {
                    long seq = json != null ? json.path("seq").asLong(-1) : seqOf(text);
                    events.add(new Event(seq, json, text, lineBytes));
                } else {
                    pageBytes -= bytes.length;
                }
            }
            line.reset();
            lineBytes = 0;
        }
    }
}
