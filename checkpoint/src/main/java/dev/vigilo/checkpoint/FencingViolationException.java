package dev.vigilo.checkpoint;

import dev.vigilo.common.errors.ConflictException;

/**
 * Two different events were found at one (item_id, item_seq): two writers believed they owned the
 * item. Reported, never folded silently; the item's state cannot be trusted until an operator
 * decides. Kind CONFLICT.
 */
public class FencingViolationException extends ConflictException {
    private static final long serialVersionUID = 1L;

    private final String itemId;
    private final transient ItemSeq itemSeq;

    public FencingViolationException(String itemId, ItemSeq itemSeq, String message) {
        super(message);
        this.itemId = itemId;
        this.itemSeq = itemSeq;
    }

    /** The item with two histories. */
    public String itemId() {
        return itemId;
    }

    /** The contested sequence number. */
    public ItemSeq itemSeq() {
        return itemSeq;
    }
}
