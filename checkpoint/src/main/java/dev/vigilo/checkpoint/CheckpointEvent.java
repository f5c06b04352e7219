package dev.vigilo.checkpoint;

import java.time.Instant;
import java.util.Objects;

/**
 * One immutable row of the checkpoint log, column for column (see docs/formats/checkpoint-log.md).
 * Nullable components are the spec's nullable columns; {@code value} is null for events that carry
 * no field value. Events read back carry a {@link FieldValue.BlobRef} instead of blob bytes.
 */
public record CheckpointEvent(
        EventId eventId,
        String itemId,
        String rootItemId,
        String parentItemId,
        ItemSeq itemSeq,
        CheckpointId checkpointId,
        EventType eventType,
        String stepName,
        Long stepIndex,
        String stepInstanceId,
        Long iteration,
        int attempt,
        String runId,
        WriterEpoch writerEpoch,
        String fieldName,
        String fieldType,
        Integer codecVersion,
        FieldValue value,
        String queryTagsJson,
        String terminal,
        String errorType,
        String errorDump,
        String traceback,
        Instant eventTs,
        int schemaVersion) {

    public CheckpointEvent {
        Objects.requireNonNull(eventId, "eventId");
        Objects.requireNonNull(itemId, "itemId");
        Objects.requireNonNull(rootItemId, "rootItemId");
        Objects.requireNonNull(itemSeq, "itemSeq");
        Objects.requireNonNull(checkpointId, "checkpointId");
        Objects.requireNonNull(eventType, "eventType");
        Objects.requireNonNull(runId, "runId");
        Objects.requireNonNull(writerEpoch, "writerEpoch");
        Objects.requireNonNull(eventTs, "eventTs");
    }

    /**
     * Whether two events are the same logical event (a retried write): everything but the timestamp
     * and blob representation (bytes vs reference) must agree.
     */
    public boolean sameEvent(CheckpointEvent o) {
        return eventId.equals(o.eventId)
                && itemId.equals(o.itemId)
                && itemSeq.equals(o.itemSeq)
                && eventType == o.eventType
                && Objects.equals(fieldName, o.fieldName);
    }
}
