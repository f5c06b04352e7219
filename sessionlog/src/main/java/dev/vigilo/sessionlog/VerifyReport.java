package dev.vigilo.sessionlog;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;

/**
 * The verdict on one session log, with the same accounting as the published reader (referee).
 *
 * @param verdict        "ACCEPT" or "REJECT"
 * @param events         stored events plus synthesized closers (the referee's events=); 0 when rejected
 * @param stored         committed stored events (packed rows expanded; P1 commit records count as events)
 * @param closers        closers synthesized for an open turn
 * @param channel        protocol channel that decided the committed region
 * @param compression    the log's encoding, detected from its bytes (zstd frames, or uncompressed JSONL)
 * @param hwSeq          seq of the last committed stored event, null when there is none or rejected
 * @param hwOffset       byte offset where the committed prefix ends, null when rejected
 * @param fenced         rows skipped as stale-writer residue (rule 2)
 * @param truncated      rows dropped as uncommitted after the HW or by an epoch switch (rules 1 and 3)
 * @param tornOffset     where the published reader truncates a torn tail (the start of an incomplete final frame;
 *                       uncompressed: the end of the committed prefix of lines), or null
 * @param manifestState  "absent", "consistent", "lags", "ahead" or "invalid"
 * @param maxEpoch       highest writer epoch seen in committed metadata, or null
 * @param frames         complete zstd frames in the file, header included (uncompressed: complete lines, header
 *                       included)
 * @param error          why the log was rejected, or null
 * @param errorOffset    byte offset of the damage, or null (also null when no single offset applies)
 */
public record VerifyReport(
        String verdict,
        long events,
        long stored,
        long closers,
        Channel channel,
        Compression compression,
        Long hwSeq,
        Long hwOffset,
        long fenced,
        long truncated,
        Long tornOffset,
        String manifestState,
        Long maxEpoch,
        long frames,
        String error,
        Long errorOffset) {
    public static final String ACCEPT = "ACCEPT";
    public static final String REJECT = "REJECT";

    /** @return true when the verdict is ACCEPT */
    public boolean accepted() {
        return ACCEPT.equals(verdict);
    }

    /** Writes the report: jackson-core's generator is enough, so printing it starts no data binding. */
    private static final JsonFactory JSON = new JsonFactory();

    /** @return the object {@code vigilo session verify --json} prints (snake_case keys, nulls kept) */
    public String toJson() {
        StringWriter out = new StringWriter();
        try (JsonGenerator g = JSON.createGenerator(out)) {
            g.writeStartObject();
            g.writeStringField("verdict", verdict);
            g.writeNumberField("events", events);
            g.writeNumberField("stored", stored);
            g.writeNumberField("closers", closers);
            g.writeStringField("channel", channel.jsonName());
            g.writeStringField("compression", compression.jsonName());
            number(g, "hw_seq", hwSeq);
            number(g, "hw_offset", hwOffset);
            g.writeNumberField("fenced", fenced);
            g.writeNumberField("truncated", truncated);
            number(g, "torn_offset", tornOffset);
            g.writeStringField("manifest", manifestState);
            number(g, "max_epoch", maxEpoch);
            g.writeNumberField("frames", frames);
            g.writeStringField("error", error);
            number(g, "error_offset", errorOffset);
            g.writeEndObject();
        } catch (IOException e) {
            throw new UncheckedIOException(e); // a StringWriter does not fail
        }
        return out.toString();
    }

    private static void number(JsonGenerator g, String name, Long value) throws IOException {
        if (value == null) {
            g.writeNullField(name);
        } else {
            g.writeNumberField(name, value);
        }
    }

    /** @return the one-line text form: {@code ACCEPT events=N stored=S closers=C channel=...} or {@code REJECT events=0 error=...} */
    public String toText() {
        if (!accepted()) {
            return "REJECT events=0 error=" + error + (errorOffset == null ? "" : " offset=" + errorOffset);
        }
        return "ACCEPT events=" + events + " stored=" + stored + " closers=" + closers + " channel="
                + channel.jsonName()
                + " compression=" + compression.jsonName()
                + " hw_seq=" + hwSeq + " hw_offset=" + hwOffset + " fenced=" + fenced + " truncated=" + truncated
                + " torn=" + (tornOffset == null ? "no" : tornOffset);
    }
}
