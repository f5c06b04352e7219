package dev.vigilo.web;

import com.fasterxml.jackson.databind.JsonNode;
import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.sessionlog.VerifyReport;
import io.javalin.http.Context;
import java.io.OutputStream;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.function.Function;

/**
 * The reading view of one transcript, shared by the transcript viewer ({@code /sessions/view}) and a case's transcript
 * page: the conversation first ({@link Conversation}), then how the case was scored ({@link Scoring}), then one
 * collapsed section with the log's storage and verification (the reader's verdict, high watermark, frames, fencing,
 * the page's events by type). Paged by {@link TranscriptScan}: {@code page=N}, {@code event=SEQ} (the page holding that
 * event, which is marked), {@code q=TEXT} (a bounded search of the whole transcript); {@code from=SEQ}, the viewer's
 * old address, is read as {@code event}.
 */
final class TranscriptPage {
    /**
     * Where the page lives: its path and the query parameters that choose the transcript ({@code path}, or
     * {@code epoch} and {@code attempt}), kept by every link and form of the page.
     */
    record Address(String path, Map<String, String> fixed) {
        /** The page's address with the fixed parameters and {@code extra} ({@code name=value} pairs, encoded here). */
        String href(String... extra) {
            StringBuilder b = new StringBuilder(path);
            char sep = '?';
            for (Map.Entry<String, String> p : fixed.entrySet()) {
                b.append(sep).append(p.getKey()).append('=').append(enc(p.getValue()));
                sep = '&';
            }
            for (int i = 0; i + 1 < extra.length; i += 2) {
                b.append(sep).append(extra[i]).append('=').append(enc(extra[i + 1]));
                sep = '&';
            }
            return b.toString();
        }

        String page(long page) {
            return page <= 1 ? href() : href("page", Long.toString(page));
        }

        /**
         * An event: its page with the event marked (a fold holding it open), scrolled to by the browser. The page is
         * chosen by the event ({@code event=}), so the link stays right however the page is addressed.
         */
        String event(long seq) {
            return href("event", Long.toString(seq)) + "#seq-" + seq;
        }

        private static String enc(String s) {
            return URLEncoder.encode(s, StandardCharsets.UTF_8);
        }
    }

    private TranscriptPage() {}

    /** What the request asks for: {@code page}, {@code event} (or the old {@code from}) and {@code q}. */
    static TranscriptScan.Request request(Context ctx) {
        long page = Params.number(ctx, "page", 1, Long.MAX_VALUE / TranscriptScan.PAGE_EVENTS, 1);
        OptionalLong target = Params.query(ctx, "event")
                .or(() -> Params.query(ctx, "from"))
                .map(v -> OptionalLong.of(Params.number(v, "event", 0, Long.MAX_VALUE / 2)))
                .orElse(OptionalLong.empty());
        Optional<String> q = Params.query(ctx, "q");
        if (q.isPresent() && q.get().strip().length() > TranscriptScan.MAX_QUERY) {
            throw new InvalidInputException("q: search for at most " + TranscriptScan.MAX_QUERY + " characters");
        }
        return new TranscriptScan.Request(page, target, q);
    }

    /** Reads the transcript once for the page ({@link TranscriptScan}) and puts what the partials show. */
    static TranscriptScan.Result put(
            Map<String, Object> m,
            Function<OutputStream, VerifyReport> reader,
            TranscriptScan.Request request,
            Address address,
            Map<String, Double> passScores) {
        TranscriptScan.Result r = TranscriptScan.scan(reader, request);
        long pages = r.pages();
        long page = Math.min(r.page(), pages);
        m.put("page", Views.count(page));
        m.put("pages", Views.count(pages));
        m.put("events_label", Views.count(r.total()) + (r.total() == 1 ? " event" : " events"));
        m.put("first_href", page > 1 ? address.page(1) : null);
        m.put("prev_href", page > 1 ? address.page(page - 1) : null);
        m.put("next_href", page < pages ? address.page(page + 1) : null);
        m.put("last_href", page < pages ? address.page(pages) : null);
        m.put("answer_href", r.answer().map(a -> address.event(a.seq())).orElse(null));
        m.put(
                "answer_label",
                r.answer()
                        .map(a -> a.output() ? "the final answer" : "the last assistant message")
                        .orElse(null));
        m.put("form_action", address.path());
        List<Map<String, String>> hidden = new ArrayList<>();
        address.fixed().forEach((k, v) -> hidden.add(Map.of("name", k, "value", v)));
        m.put("form_params", hidden);
        m.put("query", request.query().orElse(""));
        m.put("has_query", request.query().isPresent());
        List<Map<String, Object>> hits = new ArrayList<>();
        for (TranscriptScan.Hit h : r.hits()) {
            Map<String, Object> x = new LinkedHashMap<>();
            x.put("seq", h.seq());
            // Scoring events have no row of their own: their hits lead to the scoring section.
            x.put(
                    "href",
                    Conversation.SCORING.contains(h.type())
                            ? address.page(h.page()) + "#scoring"
                            : address.event(h.seq()));
            x.put("type", h.type());
            x.put("hit_page", Views.count(h.page()));
            x.put("snippet", h.snippet());
            hits.add(x);
        }
        m.put("hits", hits);
        m.put(
                "hits_label",
                r.moreHits()
                        ? "the first " + hits.size() + " events holding it (more do; search for a longer text)"
                        : hits.size() == 1 ? "1 event holds it" : hits.size() + " events hold it");
        m.put("rows", Conversation.rows(r.events(), request.target()));
        Scoring.put(m, r.scoring(), passScores);
        putVerify(m, r.report());
        m.put("warnings", warnings(r.report()));
        List<Map<String, Object>> index = new ArrayList<>();
        for (Transcript.Event e : r.events()) {
            JsonNode j = e.json();
            long t = j == null ? -1 : j.path("time").asLong(-1);
            index.add(Map.of(
                    "seq",
                    e.seq(),
                    "type",
                    j == null ? "(shown cut)" : j.path("type").asText("?"),
                    "time",
                    t < 0 ? "" : Views.time(Instant.ofEpochMilli(t)),
                    "bytes",
                    Views.count(e.bytes())));
        }
        m.put("page_events", index);
        return r;
    }

    /**
     * What the reader's verdict says that a reader of the conversation must know before trusting it (a rejected log,
     * a torn tail, rows of a stale writer skipped, uncommitted rows dropped); the details are in the storage section.
     */
    private static List<String> warnings(VerifyReport r) {
        List<String> w = new ArrayList<>();
        if (!r.accepted()) {
            w.add("The session-log reader rejected this log (" + r.verdict()
                    + (r.error() == null ? "" : ": " + r.error()) + "): only the events before the problem are shown.");
        }
        if (r.tornOffset() != null) {
            w.add("A torn final frame at byte " + r.tornOffset() + " was dropped (a writer stopped mid-write).");
        }
        if (r.fenced() > 0) {
            w.add(r.fenced() + " rows of a stale writer were skipped.");
        }
        if (r.truncated() > 0) {
            w.add(r.truncated() + " uncommitted rows were dropped.");
        }
        return w;
    }

    /** The reader's verdict and accounting, as {@code transcript-verify} shows them. */
    static void putVerify(Map<String, Object> m, VerifyReport r) {
        m.put("verdict", r.verdict());
        m.put("accepted", r.accepted());
        m.put("channel", r.channel().jsonName());
        m.put("events_total", r.events());
        m.put("stored", r.stored());
        m.put("closers", r.closers());
        m.put("hw_seq", r.hwSeq() == null ? "none" : r.hwSeq().toString());
        m.put("hw_offset", r.hwOffset() == null ? "none" : r.hwOffset().toString());
        m.put("frames", r.frames());
        m.put("manifest", r.manifestState());
        m.put("fenced", r.fenced());
        m.put("truncated", r.truncated());
        m.put("has_fenced", r.fenced() > 0);
        m.put("has_truncated", r.truncated() > 0);
        m.put("torn", r.tornOffset() == null ? null : r.tornOffset().toString());
        m.put("error", r.error());
        m.put("error_offset", r.errorOffset() == null ? null : r.errorOffset().toString());
    }
}
