package dev.vigilo.sessionlog;

import com.fasterxml.jackson.databind.node.ObjectNode;

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

    /** @return the object {@code vigilo session verify --json} prints (snake_case keys, nulls kept) */
    public String toJson() {
        ObjectNode n = Json.MAPPER.createObjectNode();
        n.put("verdict", verdict)
                .put("events", events)
                .put("stored", stored)
                .put("closers", closers)
                .put("channel", channel.jsonName())
                .put("compression", compression.jsonName());
        n.put("hw_seq", hwSeq)
                .put("hw_offset", hwOffset)
                .put("fenced", fenced)
                .put("truncated", truncated)
                .put("torn_offset", tornOffset)
                .put("manifest", manifestState)
                .put("max_epoch", maxEpoch)
                .put("frames", frames)
                .put("error", error)
                .put("error_offset", errorOffset);
        return n.toString();
    }

    /** @return the one-line text form: {@code ACCEPT events=N stored=S closers=C channel=...} or {@code REJECT events=0 error=...} */
    public String toText() {
        if (!accepted())
            return "REJECT events=0 error=" + error + (errorOffset == null ? "" : " offset=" + errorOffset);
        return "ACCEPT events=" + events + " stored=" + stored + " closers=" + closers + " channel="
                + channel.jsonName()
                + " compression=" + compression.jsonName()
                + " hw_seq=" + hwSeq + " hw_offset=" + hwOffset + " fenced=" + fenced + " truncated=" + truncated
                + " torn=" + (tornOffset == null ? "no" : tornOffset);
    }
}
