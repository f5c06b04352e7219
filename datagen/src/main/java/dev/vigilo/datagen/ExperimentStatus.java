package dev.vigilo.datagen;

import java.util.Map;

/**
 * Counts of one experiment, folded from its checkpoint log. Component names map 1:1 onto the {@code
 * --json} keys (snake_case): {@code pipeline, experiment, items, completed, filtered, failed,
 * running, failures_by_type, progress}. {@code running} counts items neither terminal nor failed
 * (in flight or not started yet); {@code failed} counts items whose current step exhausted its
 * attempts; {@code failures_by_type} counts FAILED events (attempts) by error type; {@code
 * progress} is (completed + filtered + failed) / items, 0 when empty; {@code usage} and {@code usage_by_step} sum
 * what chat steps used ({@link ChatUsage}); {@code processes} lists the writers (process slots) that worked on the
 * experiment ({@link ProcessStatus}); {@code filtered_by_step} counts the filtered items by the step that filtered them
 * (a filter step's condition, or a dedup step: a duplicate).
 */
public record ExperimentStatus(
        String pipeline,
        String experiment,
        long items,
        long completed,
        long filtered,
        long failed,
        long running,
        Map<String, Long> failuresByType,
        double progress,
        ChatUsage usage,
        Map<String, ChatUsage> usageByStep,
        java.util.List<ProcessStatus> processes,
        Map<String, Long> filteredByStep) {
    public ExperimentStatus {
        filteredByStep = java.util.Collections.unmodifiableMap(new java.util.TreeMap<>(filteredByStep));
        failuresByType = java.util.Collections.unmodifiableMap(new java.util.TreeMap<>(failuresByType));
        usageByStep = java.util.Collections.unmodifiableMap(new java.util.TreeMap<>(usageByStep));
        processes = java.util.List.copyOf(processes);
    }

    /**
     * The {@code --json} rendering: one object with the snake_case keys listed above, failure types
     * sorted.
     */
    public String toJson() {
        return toJson(null);
    }

    /**
     * The {@code --json} rendering with the experiment's {@code budget} ({@link ExperimentBudget}'s keys) when it has
     * one (null: none, and no {@code budget} key).
     */
    public String toJson(ExperimentBudget budget) {
        com.fasterxml.jackson.databind.node.ObjectNode o = Json.MAPPER
                .createObjectNode()
                .put("pipeline", pipeline)
                .put("experiment", experiment)
                .put("items", items)
                .put("completed", completed)
                .put("filtered", filtered)
                .put("failed", failed)
                .put("running", running)
                .put("progress", progress);
        com.fasterxml.jackson.databind.node.ObjectNode f = o.putObject("failures_by_type");
        failuresByType.forEach(f::put);
        o.set("usage", usage.toJson());
        com.fasterxml.jackson.databind.node.ObjectNode u = o.putObject("usage_by_step");
        usageByStep.forEach((step, x) -> u.set(step, x.toJson()));
        com.fasterxml.jackson.databind.node.ArrayNode ps = o.putArray("processes");
        processes.forEach(p -> ps.add(p.toJson()));
        com.fasterxml.jackson.databind.node.ObjectNode fb = o.putObject("filtered_by_step");
        filteredByStep.forEach(fb::put);
        if (budget != null) {
            o.set("budget", budget.toJson());
        }
        return Json.canonical(o);
    }
}
