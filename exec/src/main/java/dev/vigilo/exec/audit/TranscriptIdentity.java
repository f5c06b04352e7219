package dev.vigilo.exec.audit;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.vigilo.common.json.StrictJson;
import dev.vigilo.sessionlog.SessionCat;
import dev.vigilo.sessionlog.VerifyReport;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Path;
import java.util.Optional;
import java.util.UUID;

/**
 * What a transcript says it is: its session log's verdict and the data of its first event, the {@code vigilo/case}
 * event that names the run, chunk, case, epoch, attempt and lease generation it was recorded for
 * ({@code docs/formats/transcript.md}). A transcript's key and digest only say where its bytes are and that they
 * are unaltered; a slice moved to another case's reference (with that reference's length and SHA-256 changed to
 * match) is caught only by what the slice itself names.
 *
 * <p>Cost: the one pass of the session-log reader that gives the verdict (the same pass {@code SessionVerifier}
 * makes) also streams the committed events; the first line is kept (at most {@link #MAX_FIRST_EVENT} bytes), the
 * rest discarded as it is written.
 *
 * @param report the session log's verdict
 * @param event  the first committed event's {@code data} when that event is a {@code vigilo/case} event
 */
record TranscriptIdentity(VerifyReport report, Optional<JsonNode> event) {
    /** The case event is a few hundred bytes; a first line longer than this is not one. */
    static final int MAX_FIRST_EVENT = 64 * 1024;

    private static final ObjectMapper MAPPER = StrictJson.newMapper();
    private static final String CASE_EVENT = "vigilo/case";

    /** Reads the session log at {@code file}: its verdict and its case event. */
    static TranscriptIdentity read(Path file) {
        FirstLine first = new FirstLine();
        VerifyReport report = SessionCat.cat(file, 0, first).report();
        Optional<JsonNode> event = Optional.empty();
        if (report.accepted() && first.complete) {
            try {
                JsonNode e = MAPPER.readTree(first.bytes.toByteArray());
                if (e != null
                        && CASE_EVENT.equals(e.path("type").textValue())
                        && e.path("data").isObject()) {
                    event = Optional.of(e.get("data"));
                }
            } catch (IOException e) {
                // not JSON (the reader accepted it, so this does not happen): no case event, reported as such
            }
        }
        return new TranscriptIdentity(report, event);
    }

    /**
     * How the case event differs from what the receipt says the transcript is, or empty when it names exactly that.
     *
     * @param epoch 1-based in a run of several epochs, else 0 (the event then has no {@code epoch})
     */
    Optional<String> mismatch(
            UUID run, long chunk, long ordinal, String caseId, String caseSha256, int epoch, int attempt, long gen) {
        if (event.isEmpty()) {
            return Optional.of("has no vigilo/case event as its first event");
        }
        JsonNode d = event.get();
        boolean same = text(d, "run_id").equals(run.toString())
                && number(d, "chunk_index") == chunk
                && number(d, "ordinal") == ordinal
                && text(d, "case_id").equals(caseId)
                && text(d, "case_sha256").equals(caseSha256)
                && (epoch > 0 ? number(d, "epoch") == epoch : d.get("epoch") == null)
                && number(d, "attempt") == attempt
                && number(d, "lease_generation") == gen;
        if (same) {
            return Optional.empty();
        }
        return Optional.of("names case \"" + text(d, "case_id") + "\" (ordinal " + d.path("ordinal")
                + (d.has("epoch") ? ", epoch " + d.get("epoch") : "") + ", attempt " + d.path("attempt")
                + ", chunk " + d.path("chunk_index") + ", lease generation " + d.path("lease_generation")
                + ", run " + text(d, "run_id") + ")");
    }

    private static String text(JsonNode d, String field) {
        JsonNode v = d.get(field);
        return v != null && v.isTextual() ? v.textValue() : String.valueOf(v);
    }

    /** The field's integer value, or -1 when it is not an integer (never equal to what it is compared with). */
    private static long number(JsonNode d, String field) {
        JsonNode v = d.get(field);
        return v != null && v.isIntegralNumber() && v.canConvertToLong() ? v.longValue() : -1;
    }

    /** Keeps the bytes of the first line written to it (up to its newline), drops everything else. */
    private static final class FirstLine extends OutputStream {
        final ByteArrayOutputStream bytes = new ByteArrayOutputStream(512);
        boolean complete;
        boolean done;

        @Override
        public void write(int b) {
            if (done) {
                return;
            }
            if (b == '\n') {
                complete = true;
                done = true;
            } else if (bytes.size() >= MAX_FIRST_EVENT) {
                done = true;
            } else {
                bytes.write(b);
            }
        }

        @Override
        public void write(byte[] b, int off, int len) {
            if (done) {
                return;
            }
            for (int i = 0; i < len && !done; i++) {
                write(b[off + i]);
            }
        }
    }
}
