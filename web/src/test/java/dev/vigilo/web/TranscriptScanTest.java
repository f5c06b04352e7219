package dev.vigilo.web;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.vigilo.exec.worker.LongTranscript;
import dev.vigilo.sessionlog.SessionCat;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link TranscriptScan} and {@link Conversation} on a tool-calling transcript of a few thousand events written as a
 * worker writes one ({@link LongTranscript}), against the session-log reader's own stream: the pages partition the
 * events in order, a target and a page past the end land where they should, the search is bounded, and on every page
 * each tool call and each result is drawn exactly once, also where a page boundary separates them.
 */
class TranscriptScanTest {
    private static final ObjectMapper MAPPER = new ObjectMapper();

    @TempDir
    static Path dir;

    static Path log;
    static List<JsonNode> events;

    @BeforeAll
    static void write() throws IOException {
        log = dir.resolve("session.jsonl.zstd");
        LongTranscript.write(log, 3_000);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        SessionCat.cat(log, 0, out);
        events = new ArrayList<>();
        for (String line : out.toString(StandardCharsets.UTF_8).split("\n")) {
            events.add(MAPPER.readTree(line));
        }
    }

    private static TranscriptScan.Result scan(long page, OptionalLong target, String query) {
        return TranscriptScan.scan(
                out -> SessionCat.cat(log, 0, out).report(),
                new TranscriptScan.Request(page, target, Optional.ofNullable(query)));
    }

    private static List<Long> seqs(TranscriptScan.Result r) {
        return r.events().stream().map(Transcript.Event::seq).toList();
    }

    @Test
    void thePagesPartitionTheEventsInOrder() {
        TranscriptScan.Result first = scan(1, OptionalLong.empty(), null);
        assertThat(first.total()).isEqualTo(events.size());
        long pages = first.pages();
        assertThat(pages).isEqualTo((events.size() + 199) / 200);
        List<Long> all = new ArrayList<>();
        for (long p = 1; p <= pages; p++) {
            TranscriptScan.Result r = scan(p, OptionalLong.empty(), null);
            assertThat(r.page()).isEqualTo(p);
            assertThat(r.events()).hasSize(p < pages ? 200 : events.size() - (int) (pages - 1) * 200);
            assertThat(r.events()).allMatch(e -> e.json() != null);
            all.addAll(seqs(r));
        }
        assertThat(all)
                .containsExactlyElementsOf(
                        events.stream().map(e -> e.path("seq").asLong()).toList());
        // Past the end: the last page.
        assertThat(scan(pages + 5, OptionalLong.empty(), null).page()).isEqualTo(pages);
        // The scoring events are kept wherever the page is; the answer's place is known from any page.
        assertThat(first.scoring())
                .extracting(e -> e.json().path("type").asText())
                .containsExactly("vigilo/evaluator", "vigilo/gates");
        long output = events.stream()
                .filter(e -> e.path("type").asText().equals("vigilo/output"))
                .findFirst()
                .orElseThrow()
                .path("seq")
                .asLong();
        assertThat(first.answer()).hasValueSatisfying(a -> {
            assertThat(a.seq()).isEqualTo(output);
            assertThat(a.output()).isTrue();
            assertThat(seqs(scan(a.page(), OptionalLong.empty(), null))).contains(output);
        });
    }

    @Test
    void aTargetOpensThePageHoldingIt() {
        long seq = events.get(1_234).path("seq").asLong();
        TranscriptScan.Result r = scan(1, OptionalLong.of(seq), null);
        assertThat(r.page()).isEqualTo(1_234 / 200 + 1);
        assertThat(seqs(r)).contains(seq);
        // Beyond the last event: the last page.
        TranscriptScan.Result beyond = scan(1, OptionalLong.of(Long.MAX_VALUE / 4), null);
        assertThat(beyond.page()).isEqualTo(beyond.pages());
    }

    @Test
    void theSearchIsBoundedAndReadsTextOnly() {
        TranscriptScan.Result many = scan(1, OptionalLong.empty(), "VALUE");
        assertThat(many.hits()).hasSize(TranscriptScan.MAX_HITS);
        assertThat(many.moreHits()).isTrue();
        // The user's message ("Look up every value."), then the tool results, case aside.
        assertThat(many.hits().get(0).type()).isEqualTo("user/message");
        assertThat(many.hits().subList(1, TranscriptScan.MAX_HITS))
                .allMatch(h -> h.type().equals("tool/result") && h.snippet().contains("value "));
        // in page order, each on the page the pager gives it
        for (TranscriptScan.Hit h : many.hits().subList(0, 3)) {
            assertThat(seqs(scan(h.page(), OptionalLong.empty(), null))).contains(h.seq());
        }
        // The first hit is the first event holding it (value 17, before value 170 and on).
        List<TranscriptScan.Hit> seventeen =
                scan(1, OptionalLong.empty(), "Value 17").hits();
        assertThat(seventeen).isNotEmpty();
        assertThat(seventeen.get(0).snippet()).isEqualTo("value 17");
        assertThat(seventeen).extracting(TranscriptScan.Hit::snippet).allMatch(x -> x.startsWith("value 17"));
        // A key's name or a type is not text.
        assertThat(scan(1, OptionalLong.empty(), "toolCallId").hits()).isEmpty();
    }

    @Test
    void everyCallAndEveryResultIsDrawnOnceOnEveryPage() {
        long pages = scan(1, OptionalLong.empty(), null).pages();
        for (long p = 1; p <= pages; p++) {
            TranscriptScan.Result r = scan(p, OptionalLong.empty(), null);
            Set<String> calls = new HashSet<>();
            int results = 0;
            for (Transcript.Event e : r.events()) {
                String type = e.json().path("type").asText();
                if (type.equals("tool/call")) {
                    calls.add(e.json().at("/data/callId").asText());
                } else if (type.equals("assistant/message")) {
                    for (JsonNode b : e.json().at("/data/message/content")) {
                        if (b.path("type").asText().equals("tool-call")) {
                            calls.add(b.path("id").asText());
                        }
                    }
                } else if (type.equals("tool/result")) {
                    results++;
                }
            }
            int[] drawn = new int[2];
            walk(Conversation.rows(r.events()), drawn);
            assertThat(drawn[0]).as("calls drawn on page " + p).isEqualTo(calls.size());
            assertThat(drawn[1]).as("results drawn on page " + p).isEqualTo(results);
        }
    }

    /** Counts the calls ({@code [0]}) and results ({@code [1]}) the rows draw, folded rows included. */
    @SuppressWarnings("unchecked")
    private static void walk(List<Map<String, Object>> rows, int[] drawn) {
        for (Map<String, Object> row : rows) {
            if (Boolean.TRUE.equals(row.get("fold"))) {
                walk((List<Map<String, Object>>) row.get("folded"), drawn);
                continue;
            }
            if ("Tool result".equals(row.get("role"))) {
                drawn[1]++;
            }
            for (Map<String, Object> b : (List<Map<String, Object>>) row.get("blocks")) {
                if (Boolean.TRUE.equals(b.get("kind_call"))) {
                    drawn[0]++;
                    if (Boolean.TRUE.equals(b.get("has_result"))) {
                        drawn[1]++;
                    }
                }
            }
        }
    }
}
