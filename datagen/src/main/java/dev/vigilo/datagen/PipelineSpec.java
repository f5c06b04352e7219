package dev.vigilo.datagen;

import java.nio.file.Path;
import java.util.List;
import java.util.Objects;

/**
 * A parsed pipeline: its name (the log's pipeline segment), the seed JSONL, the field holding each
 * seed's item id (null: ids are {@code item-<line>}), and the ordered steps.
 */
public record PipelineSpec(String name, Path input, String idField, List<StepSpec> steps) {
    public PipelineSpec {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(input, "input");
        steps = List.copyOf(steps);
    }
}
