package dev.vigilo.checkpoint;

import java.util.Objects;

/**
 * An item's identity in the item tree: its id, the root of its tree, and its direct parent (null
 * for roots).
 */
public record ItemRef(String itemId, String rootItemId, String parentItemId) {
    public ItemRef {
        Objects.requireNonNull(itemId, "itemId");
        Objects.requireNonNull(rootItemId, "rootItemId");
        if (itemId.isEmpty()) {
            throw new IllegalArgumentException("item id must not be empty");
        }
        if (parentItemId == null && !rootItemId.equals(itemId)) {
            throw new IllegalArgumentException("a root item must be its own root: " + itemId + " vs " + rootItemId);
        }
    }

    /** A seed (root) item. */
    public static ItemRef root(String itemId) {
        return new ItemRef(itemId, itemId, null);
    }

    /** A child of {@code parent}, in the parent's tree. */
    public ItemRef child(String childId) {
        return new ItemRef(childId, rootItemId, itemId);
    }
}
