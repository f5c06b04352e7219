package dev.vigilo.datagen;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.vigilo.checkpoint.CheckpointEvent;
import dev.vigilo.checkpoint.CheckpointLog;
import dev.vigilo.checkpoint.CompletedStep;
import dev.vigilo.checkpoint.Failure;
import dev.vigilo.checkpoint.ItemState;
import dev.vigilo.checkpoint.LogLocation;
import dev.vigilo.checkpoint.LogReader;
import dev.vigilo.checkpoint.LogRoot;
import dev.vigilo.checkpoint.Terminal;
import dev.vigilo.checkpoint.Trajectory;
import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.common.errors.UnavailableException;
import dev.vigilo.common.input.OutputFiles;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * {@code durableRoot} everywhere: a local directory or a prefix of a configured S3 store (see {@link
 * LogRoot#resolve}).
 *
 * <p>Read-side API for {@code vigilo datagen status | item | export}. Every method folds the
 * experiment's checkpoint log (base table plus flushed generations); nothing is written to the log.
 */
public final class Experiments {
    private Experiments() {}

    /** One experiment of one pipeline under a durable root. */
    public record ExperimentRef(String pipeline, String experiment) {}

    /**
     * One item as a listing shows it.
     *
     * @param parentItemId   the item an expand step created it from, or null for a seed item
     * @param completedSteps STEP_COMPLETED events folded
     * @param failures       FAILED events (attempts) folded
     * @param lastErrorType  the error type of its newest failure
     * @param lastStep       the step of its newest completed step or failure, whichever is newer
     */
    public record ItemSummary(
            String itemId,
            ItemStatus status,
            String parentItemId,
            int completedSteps,
            int failures,
            Optional<String> lastErrorType,
            Optional<String> lastStep) {}

    /** A page of items sorted by id, and the id the next page starts after (empty on the last page). */
    public record ItemPage(java.util.List<ItemSummary> items, Optional<String> next) {
        public ItemPage {
            items = java.util.List.copyOf(items);
        }
    }

    /**
     * The experiments under a local durable root, sorted by pipeline and experiment (directories whose names are not
     * valid pipeline or experiment names are ignored). An S3 root is not listed: empty.
     *
     * @throws UnavailableException when the directory cannot be read
     */
    public static java.util.List<ExperimentRef> list(LogRoot durableRoot) {
        java.util.Objects.requireNonNull(durableRoot, "durableRoot");
        if (!durableRoot.isLocal()) {
            return java.util.List.of();
        }
        Path base = durableRoot.directory().resolve("datagen_checkpoints");
        if (!Files.isDirectory(base)) {
            return java.util.List.of();
        }
        java.util.List<ExperimentRef> out = new java.util.ArrayList<>();
        try (java.util.stream.Stream<Path> pipelines = Files.list(base)) {
            for (Path p : pipelines.sorted().toList()) {
                String pipeline = p.getFileName().toString();
                if (!validName(pipeline) || !Files.isDirectory(p)) {
                    continue;
                }
                for (String e : CheckpointLog.experiments(durableRoot.directory(), pipeline)) {
                    if (validName(e)) {
                        out.add(new ExperimentRef(pipeline, e));
                    }
                }
            }
        } catch (IOException e) {
            throw new UnavailableException("cannot list the experiments in " + base + ": " + e.getMessage(), e);
        }
        return out;
    }

    private static boolean validName(String name) {
        try {
            dev.vigilo.common.input.Names.segment(name, "name");
            return true;
        } catch (InvalidInputException e) {
            return false;
        }
    }

    /**
     * A page of the experiment's items sorted by id: those after {@code afterItemId} with status {@code status} (every
     * status when empty), at most {@code limit}. Folds the experiment's log like {@link #status} does.
     *
     * @throws dev.vigilo.common.errors.NotFoundException when the experiment has no log
     * @throws IllegalArgumentException when {@code limit} is not in 1..1000
     */
    public static ItemPage items(
            LogRoot durableRoot,
            String pipeline,
            String experiment,
            Optional<ItemStatus> status,
            Optional<String> afterItemId,
            int limit) {
        java.util.Objects.requireNonNull(durableRoot, "durableRoot");
        if (limit < 1 || limit > 1000) {
            throw new IllegalArgumentException("limit must be in 1..1000, got " + limit);
        }
        java.util.List<ItemSummary> page = new java.util.ArrayList<>();
        Optional<String> next = Optional.empty();
        try (CheckpointLog log = CheckpointLog.open(new LogLocation(durableRoot, pipeline, experiment));
                LogReader r = log.reader()) {
            java.util.NavigableMap<String, ItemState> all = new TreeMap<>(r.foldAll());
            java.util.NavigableMap<String, ItemState> tail =
                    afterItemId.isPresent() ? all.tailMap(afterItemId.get(), false) : all;
            for (ItemState s : tail.values()) {
                ItemStatus st = statusOf(s);
                if (status.isPresent() && status.get() != st) {
                    continue;
                }
                if (page.size() == limit) {
                    next = Optional.of(page.get(page.size() - 1).itemId());
                    break;
                }
                page.add(summary(s, st));
            }
        }
        return new ItemPage(page, next);
    }

    private static ItemSummary summary(ItemState s, ItemStatus st) {
        Optional<Failure> lastFailure = s.failures().isEmpty()
                ? Optional.empty()
                : Optional.of(s.failures().get(s.failures().size() - 1));
        Optional<String> lastStep = s.cursor().map(c -> c.stepName());
        if (lastFailure.isPresent()
                && s.cursor()
                        .map(c -> c.itemSeq().compareTo(lastFailure.get().itemSeq()) < 0)
                        .orElse(true)) {
            lastStep = Optional.ofNullable(lastFailure.get().stepName());
        }
        return new ItemSummary(
                s.item().itemId(),
                st,
                s.item().parentItemId(),
                s.completedSteps().size(),
                s.failures().size(),
                lastFailure.map(Failure::errorType),
                lastStep);
    }

    /**
     * Status of an experiment; {@link dev.vigilo.common.errors.NotFoundException} if it has no log.
     */
    public static ExperimentStatus status(LogRoot durableRoot, String pipeline, String experiment) {
        java.util.Objects.requireNonNull(durableRoot, "durableRoot");
        try (CheckpointLog log = CheckpointLog.open(new LogLocation(durableRoot, pipeline, experiment))) {
            return status(log, pipeline, experiment);
        }
    }

    /**
     * The limit of the experiment's budget as its last run with one recorded it beside the log (docs/datagen.md,
     * "Fleet limits and budget"); empty when no run of it had a budget, so that its budget need not be read (nor the
     * control database opened). {@link dev.vigilo.common.errors.NotFoundException} if it has no log.
     */
    public static Optional<java.math.BigDecimal> recordedBudget(
            LogRoot durableRoot, String pipeline, String experiment) {
        java.util.Objects.requireNonNull(durableRoot, "durableRoot");
        try (CheckpointLog log = CheckpointLog.open(new LogLocation(durableRoot, pipeline, experiment))) {
            return BudgetRecord.read(log);
        }
    }

    /**
     * The experiment's budget as every process charges it: its row of the control database's {@code fleet_budgets}
     * ({@link dev.vigilo.fleet.CostBudget#read}), or nothing charged under {@code recordedMax} before the first call.
     *
     * @throws dev.vigilo.common.errors.UnavailableException the control database is unavailable
     */
    public static ExperimentBudget budget(
            org.jdbi.v3.core.Jdbi control,
            LogRoot durableRoot,
            String pipeline,
            String experiment,
            java.math.BigDecimal recordedMax) {
        String key = PipelineRunner.budgetKey(durableRoot, pipeline, experiment);
        try {
            return ExperimentBudget.of(dev.vigilo.fleet.CostBudget.read(control, key), recordedMax);
        } catch (RuntimeException e) {
            throw dev.vigilo.common.errors.DatabaseErrors.unavailable(
                            e, "control database", "run the same command again")
                    .map(RuntimeException.class::cast)
                    .orElseThrow(() -> e);
        }
    }

    static ExperimentStatus status(CheckpointLog log, String pipeline, String experiment) {
        long items = 0, completed = 0, filtered = 0, failed = 0, running = 0;
        Map<String, Long> byType = new TreeMap<>();
        Map<String, ChatUsage> usageByStep = new TreeMap<>();
        Map<String, Long> filteredByStep = new TreeMap<>();
        Map<String, long[]> byWriter = new TreeMap<>(); // writer -> {items finished, steps completed}
        try (LogReader r = log.reader()) {
            for (ItemState s : r.foldAll().values()) {
                items++;
                for (Failure f : s.failures()) {
                    byType.merge(f.errorType(), 1L, Long::sum);
                    addUsage(usageByStep, f.stepName(), f.queryTagsJson());
                }
                for (CompletedStep c : s.completedSteps()) {
                    addUsage(usageByStep, c.stepName(), c.queryTagsJson());
                    byWriter.computeIfAbsent(c.writerEpoch().writerName(), w -> new long[2])[1]++;
                }
                ItemStatus st = statusOf(s);
                switch (st) {
                    case COMPLETED -> completed++;
                    case FILTERED -> {
                        filtered++;
                        s.cursor().ifPresent(c -> filteredByStep.merge(c.stepName(), 1L, Long::sum));
                    }
                    case FAILED -> failed++;
                    case RUNNING -> running++;
                }
                if (st != ItemStatus.RUNNING) {
                    byWriter.computeIfAbsent(s.lastEpoch().writerName(), w -> new long[2])[0]++;
                }
            }
        }
        double progress = items == 0 ? 0 : (double) (completed + filtered + failed) / items;
        ChatUsage total = usageByStep.values().stream().reduce(ChatUsage.NONE, ChatUsage::plus);
        return new ExperimentStatus(
                pipeline,
                experiment,
                items,
                completed,
                filtered,
                failed,
                running,
                byType,
                progress,
                total,
                usageByStep,
                processes(log, byWriter),
                filteredByStep);
    }

    private static void addUsage(Map<String, ChatUsage> byStep, String step, String tags) {
        if (tags == null || step == null || !tags.contains("\"chat\"")) {
            return;
        }
        try {
            ChatUsage u = ChatUsage.ofTags(Json.parse(tags));
            byStep.merge(step, u, ChatUsage::plus);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            // Tags are non-authoritative: an unreadable one counts nothing.
        }
    }

    /** Every writer that wrote a step or finished an item, and every recorded process slot. */
    private static List<ProcessStatus> processes(CheckpointLog log, Map<String, long[]> byWriter) {
        Map<Integer, Map.Entry<Assignment.SlotRecord, Boolean>> slots = Assignment.slots(log);
        Map<Integer, List<Integer>> buckets = Assignment.bucketsBySlot(log);
        Map<String, ProcessStatus> out = new TreeMap<>();
        slots.forEach((k, e) -> {
            String w = Assignment.writerName(k);
            long[] n = byWriter.getOrDefault(w, new long[2]);
            out.put(
                    w,
                    new ProcessStatus(
                            w, k, e.getKey().holder(), e.getValue(), buckets.getOrDefault(k, List.of()), n[0], n[1]));
        });
        byWriter.forEach((w, n) -> out.putIfAbsent(w, new ProcessStatus(w, -1, "", false, List.of(), n[0], n[1])));
        return new ArrayList<>(out.values());
    }

    /** An item's status. */
    public static ItemStatus statusOf(ItemState s) {
        if (s.terminal().isPresent()) {
            return s.terminal().get() == Terminal.COMPLETED ? ItemStatus.COMPLETED : ItemStatus.FILTERED;
        }
        return s.failedPermanently() ? ItemStatus.FAILED : ItemStatus.RUNNING;
    }

    /**
     * The item's folded state and trajectory as JSON: {@code item_id, root_item_id, parent_item_id,
     * status, fields, completed_steps, failures, history (events without blob bytes), children
     * (same shape, recursively)}. Empty if the item does not exist.
     */
    public static Optional<ObjectNode> item(LogRoot durableRoot, String pipeline, String experiment, String itemId) {
        java.util.Objects.requireNonNull(durableRoot, "durableRoot");
        java.util.Objects.requireNonNull(itemId, "itemId");
        try (CheckpointLog log = CheckpointLog.open(new LogLocation(durableRoot, pipeline, experiment));
                LogReader r = log.reader()) {
            return r.trajectory(itemId).map(Experiments::toJson);
        }
    }

    /** A dedup step's decision as its tags record it, without the (long, internal) key. */
    private static Optional<ObjectNode> dedupTag(CompletedStep c) {
        if (c.queryTagsJson() == null || !c.queryTagsJson().contains("\"dedup\"")) {
            return Optional.empty();
        }
        try {
            JsonNode d = Json.parse(c.queryTagsJson()).path("dedup");
            if (!d.isObject()) {
                return Optional.empty();
            }
            ObjectNode out = ((ObjectNode) d).deepCopy();
            out.remove("key");
            return Optional.of(out);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            return Optional.empty(); // tags are not the item's state; an unreadable one is simply not shown
        }
    }

    private static ObjectNode toJson(Trajectory t) {
        ItemState s = t.state();
        ObjectNode o = Json.MAPPER.createObjectNode();
        o.put("item_id", s.item().itemId())
                .put("root_item_id", s.item().rootItemId())
                .put("parent_item_id", s.item().parentItemId());
        o.put("status", statusOf(s).name().toLowerCase(java.util.Locale.ROOT));
        o.set("fields", Json.fields(s.fields()));
        ArrayNode steps = o.putArray("completed_steps");
        for (CompletedStep c : s.completedSteps()) {
            ObjectNode step = steps.addObject()
                    .put("step", c.stepName())
                    .put("step_index", c.stepIndex())
                    .put("iteration", c.iteration())
                    .put("attempt", c.attempt())
                    .put("item_seq", c.itemSeq().value());
            dedupTag(c).ifPresent(d -> step.set("dedup", d));
        }
        if (statusOf(s) == ItemStatus.FILTERED && s.cursor().isPresent()) {
            // Why the item ended: the step that filtered it, and for a dedup step the item it duplicates.
            CompletedStep by = s.cursor().get();
            ObjectNode f = o.putObject("filtered_by").put("step", by.stepName());
            dedupTag(by)
                    .ifPresent(d -> f.put("reason", "duplicate")
                            .put("duplicate_of", d.path("duplicate_of").asText())
                            .put("similarity", d.path("similarity").asText()));
            if (!f.has("reason")) {
                f.put("reason", "condition");
            }
        }
        ArrayNode fails = o.putArray("failures");
        s.failures()
                .forEach(f -> fails.addObject()
                        .put("step", f.stepName())
                        .put("attempt", f.attempt())
                        .put("iteration", f.iteration())
                        .put("error_type", f.errorType())
                        .put("error_dump", f.errorDump())
                        .put("traceback", f.traceback())
                        .put("final_attempt", f.finalAttempt())
                        .put("at", f.at().toString()));
        ArrayNode hist = o.putArray("history");
        for (CheckpointEvent e : t.history()) {
            ObjectNode h = hist.addObject()
                    .put("item_seq", e.itemSeq().value())
                    .put("event_type", e.eventType().name())
                    .put("event_id", e.eventId().value())
                    .put("checkpoint_id", e.checkpointId().value())
                    .put("step", e.stepName())
                    .put("iteration", e.iteration())
                    .put("attempt", e.attempt())
                    .put("writer_epoch", e.writerEpoch().value())
                    .put("event_ts", e.eventTs().toString());
            if (e.fieldName() != null) {
                h.put("field", e.fieldName());
            }
            if (e.value() != null) {
                h.set("value", Json.fromValue(e.value()));
            }
            if (e.terminal() != null) {
                h.put("terminal", e.terminal());
            }
            if (e.errorType() != null) {
                h.put("error_type", e.errorType());
            }
        }
        ArrayNode kids = o.putArray("children");
        t.children().forEach(c -> kids.add(toJson(c)));
        return o;
    }

    /**
     * Writes the completed leaf items (completed, no children) as JSONL in the dataset upload
     * format ({@code {"id", "input", "metadata"}}: input = the folded fields, metadata = pipeline,
     * experiment, root and parent ids), sorted by id, crash-safely ({@link OutputFiles#write}: a
     * temporary file beside {@code out}, published only when complete); an existing {@code out} is never replaced.
     * Returns the number of lines.
     *
     * @throws InvalidInputException when {@code out} exists
     * @throws UnavailableException when the file cannot be written
     */
    public static long export(LogRoot durableRoot, String pipeline, String experiment, Path out) {
        return export(durableRoot, pipeline, experiment, out, false);
    }

    /** As {@link #export(LogRoot, String, String, Path)}, replacing an existing {@code out} when {@code replace}. */
    public static long export(LogRoot durableRoot, String pipeline, String experiment, Path out, boolean replace) {
        java.util.Objects.requireNonNull(out, "out");
        CompletedLeaves leaves = completedLeaves(durableRoot, pipeline, experiment);
        return OutputFiles.write(out, "--out", replace, file -> {
            Writer w = new OutputStreamWriter(file, StandardCharsets.UTF_8);
            long n = 0;
            for (ItemState s : leaves.items()) {
                ObjectNode line =
                        Json.MAPPER.createObjectNode().put("id", s.item().itemId());
                line.set("input", Json.fields(s.fields()));
                line.putObject("metadata")
                        .put("pipeline", pipeline)
                        .put("experiment", experiment)
                        .put("root_item_id", s.item().rootItemId())
                        .put("parent_item_id", s.item().parentItemId());
                w.write(Json.canonical(line));
                w.write('\n');
                n++;
            }
            w.flush();
            return n;
        });
    }

    /** The completed leaf items of one read snapshot, by id, and the log's base version that snapshot read. */
    record CompletedLeaves(List<ItemState> items, long logVersion) {}

    /** The completed items that have no children (what an export writes), sorted by id. */
    static CompletedLeaves completedLeaves(LogRoot durableRoot, String pipeline, String experiment) {
        java.util.Objects.requireNonNull(durableRoot, "durableRoot");
        Map<String, ItemState> all;
        long version;
        try (CheckpointLog log = CheckpointLog.open(new LogLocation(durableRoot, pipeline, experiment));
                LogReader r = log.reader()) {
            all = new TreeMap<>(r.foldAll());
            version = r.baseVersion();
        }
        java.util.Set<String> parents = new java.util.HashSet<>();
        all.values().forEach(s -> {
            if (s.item().parentItemId() != null) {
                parents.add(s.item().parentItemId());
            }
        });
        List<ItemState> leaves = new ArrayList<>();
        for (ItemState s : all.values()) {
            if (statusOf(s) == ItemStatus.COMPLETED
                    && !parents.contains(s.item().itemId())) {
                leaves.add(s);
            }
        }
        return new CompletedLeaves(leaves, version);
    }
}
