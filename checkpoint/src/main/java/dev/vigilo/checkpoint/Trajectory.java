package dev.vigilo.checkpoint;

import java.util.List;

/**
 * An item's ordered history (its events without blob bytes, in item_seq order) with its folded
 * state, and the trajectories of its children (items whose parent_item_id is this item),
 * recursively.
 */
public record Trajectory(ItemState state, List<CheckpointEvent> history, List<Trajectory> children) {
    public Trajectory {
        history = List.copyOf(history);
        children = List.copyOf(children);
    }
}
