package dev.vigilo.checkpoint;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.cfg.JsonNodeFeature;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.vigilo.common.json.StrictJson;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * The events of one step boundary, written as one durable MemWAL put (all visible after a crash, or
 * none). Immutable once built: retrying {@link LogWriter#write} with the same batch writes the same
 * event ids and timestamps. A batch usually holds one item's field events plus its STEP_COMPLETED
 * (and possibly TERMINAL), and may also create child items (an expand step) so that their creation
 * is atomic with the parent's step.
 */
public final class CheckpointBatch {
    /** Current log schema version written into every row's {@code schema_version}. */
    public static final int SCHEMA_VERSION = 1;

    /** Version of the value codecs written into {@code codec_version}. */
    public static final int CODEC_VERSION = 1;

    /** The query tag of a FAILED event after which the writer gave up on the item. */
    static final String FINAL_ATTEMPT_KEY = "final_attempt";

    /** Query tags: read strictly (a key given twice is not one object), written with their keys sorted. */
    private static final ObjectMapper TAGS =
            StrictJson.newMapper().configure(JsonNodeFeature.WRITE_PROPERTIES_SORTED, true);

    /** {@code json} as a JSON object; IllegalArgumentException otherwise. */
    static ObjectNode parseTags(String json) {
        try {
            if (TAGS.readTree(json) instanceof ObjectNode o) {
                return o;
            }
        } catch (JsonProcessingException e) {
            // reported below
        }
        throw new IllegalArgumentException("query tags must be one JSON object: " + json);
    }

    /** Whether stored query tags mark a final attempt. */
    static boolean isFinalAttempt(String queryTagsJson) {
        if (queryTagsJson == null) {
            return false;
        }
        try {
            return TAGS.readTree(queryTagsJson).path(FINAL_ATTEMPT_KEY).asBoolean(false);
        } catch (JsonProcessingException e) {
            return false; // tags are non-authoritative; a foreign value marks nothing
        }
    }

    private static String canonical(ObjectNode tags) {
        try {
            return TAGS.writeValueAsString(tags);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    private static String tagsObject(String json) {
        return json == null ? null : canonical(parseTags(json));
    }

    private final CheckpointId id;
    private final List<CheckpointEvent> events;

    private CheckpointBatch(CheckpointId id, List<CheckpointEvent> events) {
        this.id = id;
        this.events = List.copyOf(events);
    }

    /** The batch's checkpoint id. */
    public CheckpointId id() {
        return id;
    }

    /** The events, in write order. */
    public List<CheckpointEvent> events() {
        return events;
    }

    /** Starts a batch written by {@code epoch} in run {@code runId} for step {@code step}. */
    public static Builder builder(String runId, WriterEpoch epoch, StepRef step) {
        return new Builder(runId, epoch, step);
    }

    /**
     * Collects events item by item; {@link #build()} derives the deterministic ids. Not
     * thread-safe.
     */
    public static final class Builder {
        private final String runId;
        private final WriterEpoch epoch;
        private final StepRef step;
        private final List<Draft> drafts = new ArrayList<>();
        private final List<ItemEvents> items = new ArrayList<>();

        private Builder(String runId, WriterEpoch epoch, StepRef step) {
            this.runId = Objects.requireNonNull(runId, "runId");
            this.epoch = Objects.requireNonNull(epoch, "epoch");
            this.step = Objects.requireNonNull(step, "step");
        }

        /** Events for {@code item}, the first of which gets sequence number {@code nextSeq}. */
        public ItemEvents item(ItemRef item, ItemSeq nextSeq) {
            Objects.requireNonNull(item, "item");
            Objects.requireNonNull(nextSeq, "nextSeq");
            for (ItemEvents ie : items) {
                if (ie.item.itemId().equals(item.itemId())) {
                    throw new IllegalStateException("item already in batch: " + item.itemId());
                }
            }
            ItemEvents ie = new ItemEvents(item, nextSeq);
            items.add(ie);
            return ie;
        }

        /** Derives ids and freezes the batch. Throws if it is empty. */
        public CheckpointBatch build() {
            if (drafts.isEmpty()) {
                throw new IllegalStateException("empty checkpoint batch");
            }
            Draft first = drafts.get(0);
            CheckpointId cid =
                    EventIds.checkpointId(epoch, first.item.itemId(), first.seq, step.stepInstanceId(), step.attempt());
            // One timestamp for the whole batch: it is the batch's commit time, and a retry must
            // not change the rows.
            Instant ts = Instant.now().truncatedTo(ChronoUnit.MICROS);
            List<CheckpointEvent> out = new ArrayList<>(drafts.size());
            for (Draft d : drafts) {
                FieldValue v = d.value;
                out.add(new CheckpointEvent(
                        EventIds.eventId(cid, d.item.itemId(), d.seq),
                        d.item.itemId(),
                        d.item.rootItemId(),
                        d.item.parentItemId(),
                        d.seq,
                        cid,
                        d.type,
                        step.stepName(),
                        step.stepIndex(),
                        step.stepInstanceId(),
                        step.iteration(),
                        step.attempt(),
                        runId,
                        epoch,
                        d.field,
                        v == null ? null : fieldType(v),
                        v == null ? null : CODEC_VERSION,
                        v,
                        d.tags,
                        d.terminal,
                        d.errorType,
                        d.errorDump,
                        d.traceback,
                        ts,
                        SCHEMA_VERSION));
            }
            return new CheckpointBatch(cid, out);
        }

        static String fieldType(FieldValue v) {
            return switch (v.kind()) {
                case "int" -> "i64";
                case "float" -> "f64";
                case "bool" -> "bool";
                case "str" -> "utf8";
                case "json" -> "json";
                default -> "bytes";
            };
        }

        /** Events of one item inside the batch; each call takes the item's next sequence number. */
        public final class ItemEvents {
            private final ItemRef item;
            private ItemSeq next;

            private ItemEvents(ItemRef item, ItemSeq first) {
                this.item = item;
                this.next = first;
            }

            private ItemEvents add(
                    EventType type,
                    String field,
                    FieldValue value,
                    String terminal,
                    String errorType,
                    String errorDump,
                    String traceback,
                    String tags) {
                drafts.add(new Draft(item, next, type, field, value, terminal, errorType, errorDump, traceback, tags));
                next = next.next();
                return this;
            }

            /**
             * ITEM_CREATED (must be the item's first event, seq 0); {@code queryTagsJson} may be
             * null.
             */
            public ItemEvents created(String queryTagsJson) {
                if (next.value() != 0) {
                    throw new IllegalStateException("ITEM_CREATED must be at item_seq 0");
                }
                return add(EventType.ITEM_CREATED, null, null, null, null, null, null, queryTagsJson);
            }

            /** FIELD_SET: {@code field} becomes {@code value}. */
            public ItemEvents set(String field, FieldValue value) {
                return add(
                        EventType.FIELD_SET,
                        Objects.requireNonNull(field, "field"),
                        Objects.requireNonNull(value, "value"),
                        null,
                        null,
                        null,
                        null,
                        null);
            }

            /** FIELD_APPEND: {@code value} is appended to list field {@code field}. */
            public ItemEvents append(String field, FieldValue value) {
                return add(
                        EventType.FIELD_APPEND,
                        Objects.requireNonNull(field, "field"),
                        Objects.requireNonNull(value, "value"),
                        null,
                        null,
                        null,
                        null,
                        null);
            }

            /** STEP_COMPLETED for the batch's step. */
            public ItemEvents stepCompleted() {
                return stepCompleted(null);
            }

            /**
             * STEP_COMPLETED for the batch's step with query tags ({@code queryTagsJson}: a JSON object, or null),
             * e.g. what the step's requests cost; folded into {@link CompletedStep#queryTagsJson()}.
             */
            public ItemEvents stepCompleted(String queryTagsJson) {
                if (step.stepName() == null) {
                    throw new IllegalStateException("STEP_COMPLETED needs a step");
                }
                return add(EventType.STEP_COMPLETED, null, null, null, null, null, null, tagsObject(queryTagsJson));
            }

            /** FAILED with an error type (required), a dump and a traceback (nullable). */
            public ItemEvents failed(String errorType, String errorDump, String traceback) {
                return failed(errorType, errorDump, traceback, false);
            }

            /**
             * FAILED; {@code finalAttempt} marks that the caller gives up on the item (no attempts
             * left), recorded as the query tag {@code {"final_attempt":true}} and folded into
             * {@link Failure#finalAttempt()}.
             */
            public ItemEvents failed(String errorType, String errorDump, String traceback, boolean finalAttempt) {
                return failed(errorType, errorDump, traceback, finalAttempt, null);
            }

            /**
             * FAILED as {@link #failed(String, String, String, boolean)}, with more query tags ({@code
             * queryTagsJson}: a JSON object without {@code final_attempt}, or null), e.g. what the failed attempt's
             * requests cost. The stored tags are one canonical JSON object (sorted keys).
             */
            public ItemEvents failed(
                    String errorType, String errorDump, String traceback, boolean finalAttempt, String queryTagsJson) {
                ObjectNode tags = queryTagsJson == null ? TAGS.createObjectNode() : parseTags(queryTagsJson);
                if (tags.has(FINAL_ATTEMPT_KEY)) {
                    throw new IllegalArgumentException("tag '" + FINAL_ATTEMPT_KEY + "' is set by finalAttempt");
                }
                if (finalAttempt) {
                    tags.put(FINAL_ATTEMPT_KEY, true);
                }
                return add(
                        EventType.FAILED,
                        null,
                        null,
                        null,
                        Objects.requireNonNull(errorType, "errorType"),
                        errorDump,
                        traceback,
                        tags.isEmpty() ? null : canonical(tags));
            }

            /** TERMINAL in state {@code terminal}. */
            public ItemEvents terminal(Terminal terminal) {
                return add(EventType.TERMINAL, null, null, terminal.column(), null, null, null, null);
            }

            /** The sequence number the next event of this item would get. */
            public ItemSeq nextSeq() {
                return next;
            }
        }
    }

    private record Draft(
            ItemRef item,
            ItemSeq seq,
            EventType type,
            String field,
            FieldValue value,
            String terminal,
            String errorType,
            String errorDump,
            String traceback,
            String tags) {}
}
