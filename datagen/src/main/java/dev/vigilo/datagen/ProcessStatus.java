package dev.vigilo.datagen;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;

/**
 * One writer (process slot) of an experiment: what the log says it did and what the assignment records say it holds.
 *
 * @param writer the writer name ({@code runner}, {@code runner-1}, ...)
 * @param slot its slot, -1 for a writer without one
 * @param holder the process that holds (or last held) the slot: {@code host/pid/uuid}, empty if unknown
 * @param live whether that process holds the slot right now
 * @param buckets the item buckets it holds (not released)
 * @param itemsFinished items whose final event it wrote (completed, filtered or failed)
 * @param stepsCompleted STEP_COMPLETED events it wrote
 */
public record ProcessStatus(
        String writer,
        int slot,
        String holder,
        boolean live,
        List<Integer> buckets,
        long itemsFinished,
        long stepsCompleted) {
    public ProcessStatus {
        buckets = List.copyOf(buckets);
    }

    ObjectNode toJson() {
        ObjectNode o = Json.MAPPER
                .createObjectNode()
                .put("writer", writer)
                .put("slot", slot)
                .put("holder", holder)
                .put("live", live)
                .put("items_finished", itemsFinished)
                .put("steps_completed", stepsCompleted);
        ArrayNode b = o.putArray("buckets");
        buckets.forEach(b::add);
        return o;
    }
}
