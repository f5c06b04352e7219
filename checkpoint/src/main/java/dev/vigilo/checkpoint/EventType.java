package dev.vigilo.checkpoint;

/** The six kinds of checkpoint-log event, stored verbatim (by {@link #name()}) in the {@code event_type} column. */
public enum EventType {
    /** An item came into existence (seed or child); carries root and parent ids. */
    ITEM_CREATED,
    /** A field was replaced by {@code value_*}. */
    FIELD_SET,
    /** {@code value_*} was appended to a list-valued field. */
    FIELD_APPEND,
    /** A step finished for the item; reconstructs the resume cursor. Written even when no field changed. */
    STEP_COMPLETED,
    /** An attempt failed; carries {@code error_type}, {@code error_dump} and {@code traceback}. */
    FAILED,
    /** The item reached a terminal state ({@code completed} or {@code filtered}). */
    TERMINAL
}
