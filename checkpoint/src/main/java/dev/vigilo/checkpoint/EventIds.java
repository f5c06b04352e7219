package dev.vigilo.checkpoint;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * Derivation of deterministic ids (documented in docs/formats/checkpoint-log.md):
 *
 * <pre>
 *   checkpoint_id = "ck-" + hex(sha256("ck\0" + writer_epoch + "\0" + item_id + "\0" + first item_seq + "\0"
 *                                      + step_instance_id + "\0" + attempt))[0:32]
 *   event_id      = "ev-" + hex(sha256("ev\0" + checkpoint_id + "\0" + item_id + "\0" + item_seq))[0:32]
 * </pre>
 *
 * The writer epoch is part of the checkpoint id, so two writer incarnations that both believe they
 * own an item write different event ids at the same item_seq: the LSM de-duplication cannot fold
 * them into one and the reader reports a {@link FencingViolationException}. A retry of one batch
 * object reuses its ids.
 */
final class EventIds {
    private EventIds() {}

    static CheckpointId checkpointId(
            WriterEpoch epoch, String itemId, ItemSeq firstSeq, String stepInstanceId, int attempt) {
        return new CheckpointId("ck-"
                + hash(
                        "ck",
                        epoch.value(),
                        itemId,
                        Long.toString(firstSeq.value()),
                        stepInstanceId == null ? "" : stepInstanceId,
                        Integer.toString(attempt)));
    }

    static EventId eventId(CheckpointId checkpointId, String itemId, ItemSeq seq) {
        return new EventId("ev-" + hash("ev", checkpointId.value(), itemId, Long.toString(seq.value())));
    }

    static String sha256Hex(byte[] bytes) {
        return HexFormat.of().formatHex(digest().digest(bytes));
    }

    private static String hash(String... parts) {
        MessageDigest md = digest();
        for (String p : parts) {
            md.update(p.getBytes(StandardCharsets.UTF_8));
            md.update((byte) 0);
        }
        return HexFormat.of().formatHex(md.digest()).substring(0, 32);
    }

    private static MessageDigest digest() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required by every Java platform", e);
        }
    }
}
