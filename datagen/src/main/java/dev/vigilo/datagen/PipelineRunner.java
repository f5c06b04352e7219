package dev.vigilo.datagen;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.vigilo.checkpoint.CheckpointBatch;
import dev.vigilo.checkpoint.CheckpointLog;
import dev.vigilo.checkpoint.ItemRef;
import dev.vigilo.checkpoint.ItemSeq;
import dev.vigilo.checkpoint.ItemState;
import dev.vigilo.checkpoint.LogLocation;
import dev.vigilo.checkpoint.LogReader;
import dev.vigilo.checkpoint.LogWriter;
import dev.vigilo.checkpoint.StepRef;
import dev.vigilo.checkpoint.Terminal;
import dev.vigilo.checkpoint.WriterOptions;
import dev.vigilo.common.errors.CancelledException;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import me.tongfei.progressbar.ProgressBar;

/**
 * Runs a pipeline over its experiment's checkpoint log, resuming where the log says: a step whose
 * STEP_COMPLETED is in the log never runs again; every step's field updates and its STEP_COMPLETED
 * are one durable batch. Safe to kill -9 at any point and run again with the same arguments. One
 * run per experiment at a time (a second run fences the first, which then stops with an error).
 */
public final class PipelineRunner {
    /**
     * Name of the single writer (MemWAL shard) a run uses; stable so a restarted run replays its
     * WAL.
     */
    static final String WRITER = "runner";

    /**
     * Run options.
     *
     * @param durableRoot durable root: a local directory or {@code s3://bucket/prefix} (credentials
     *     and endpoint from the AWS_* environment variables, see {@link LogLocation#of})
     * @param experiment experiment name
     * @param workers items processed concurrently (>= 1)
     * @param progress where progress goes: a progress bar when {@code terminal}, else one JSON
     *     object per line
     * @param terminal whether {@code progress} is an interactive terminal
     */
    public record Options(String durableRoot, String experiment, int workers, PrintStream progress, boolean terminal) {
        public Options {
            Objects.requireNonNull(durableRoot, "durableRoot");
            Objects.requireNonNull(experiment, "experiment");
            Objects.requireNonNull(progress, "progress");
            if (workers < 1) throw new IllegalArgumentException("--workers must be >= 1, got " + workers);
        }
    }

    private final PipelineSpec spec;
    private final Options opts;
    private final StepExecutor executor = new StepExecutor();
    private final Map<String, Semaphore> stepLimits = new HashMap<>();
    private final String runId = UUID.randomUUID().toString();
    private final Map<String, Ctx> items = new ConcurrentHashMap<>();
    private final AtomicInteger finished = new AtomicInteger();
    private final AtomicReference<RuntimeException> fatal = new AtomicReference<>();
    private LogWriter writer;
    private ProgressBar bar;

    private PipelineRunner(PipelineSpec spec, Options opts) {
        this.spec = spec;
        this.opts = opts;
        for (StepSpec s : spec.steps()) {
            if (s.concurrency() > 0) stepLimits.put(s.name(), new Semaphore(s.concurrency()));
            if (s.body() != null && s.body().concurrency() > 0)
                stepLimits.put(s.body().name(), new Semaphore(s.body().concurrency()));
        }
    }

    /**
     * Runs (or resumes) {@code spec} as experiment {@code opts.experiment()} and returns the final
     * status.
     *
     * @throws PipelineDefinitionException the seed input is invalid (FILE:LINE:COLUMN); nothing was
     *     written
     * @throws dev.vigilo.common.errors.VigiloException the log failed (e.g. another run of the
     *     experiment fenced us)
     */
    public static ExperimentStatus run(PipelineSpec spec, Options opts) {
        Objects.requireNonNull(spec, "spec");
        Objects.requireNonNull(opts, "opts");
        return new PipelineRunner(spec, opts).run();
    }

    /** Mutable in-memory mirror of one item's folded state, owned by one worker at a time. */
    private static final class Ctx {
        ItemRef ref;
        ObjectNode fields;
        ItemSeq next;
        final java.util.Set<String> completed = ConcurrentHashMap.newKeySet();
        final Map<String, Integer> failures = new HashMap<>();
        Long createdBy;
        ItemStatus status = ItemStatus.RUNNING;
    }

    private ExperimentStatus run() {
        List<ObjectNode> seeds = readSeeds(); // validates the whole input before anything is written
        LogLocation loc = LogLocation.of(opts.durableRoot(), spec.name(), opts.experiment(), System.getenv());
        try (CheckpointLog log = CheckpointLog.openOrCreate(loc)) {
            writer = log.openWriter(WRITER, WriterOptions.DEFAULTS);
            try {
                try (LogReader r = log.reader()) {
                    r.foldAll().forEach((id, st) -> items.put(id, ctx(st)));
                }
                createSeeds(seeds);
                process();
                writer.flush();
            } finally {
                writer.close();
            }
            EndOfRunMaintenance.run(log);
            return Experiments.status(log, spec.name(), opts.experiment());
        }
    }

    private Ctx ctx(ItemState st) {
        Ctx c = new Ctx();
        c.ref = st.item();
        c.fields = Json.fields(st.fields());
        c.next = st.nextSeq();
        st.completedSteps().forEach(s -> c.completed.add(s.stepInstanceId()));
        st.failures()
                .forEach(f -> c.failures.merge(
                        instanceId(f.stepName(), f.stepIndex() == null ? -1 : f.stepIndex(), f.iteration()),
                        1,
                        Integer::sum));
        c.createdBy = st.createdByStepIndex().orElse(null);
        c.status = st.terminal()
                .map(t -> t == Terminal.COMPLETED ? ItemStatus.COMPLETED : ItemStatus.FILTERED)
                .orElse(st.failedPermanently() ? ItemStatus.FAILED : ItemStatus.RUNNING);
        return c;
    }

    static String instanceId(String step, long index, Long iteration) {
        return StepRef.of(step, index, iteration, 1).stepInstanceId();
    }

    private List<ObjectNode> readSeeds() {
        List<ObjectNode> out = new ArrayList<>();
        Map<String, Integer> ids = new HashMap<>();
        String file = spec.input().toString();
        try (BufferedReader r = Files.newBufferedReader(spec.input(), StandardCharsets.UTF_8)) {
            String line;
            int n = 0;
            while ((line = r.readLine()) != null) {
                n++;
                if (line.isBlank()) continue;
                JsonNode node;
                try {
                    node = Json.parse(line);
                } catch (JsonProcessingException e) {
                    JsonLocation l = e.getLocation();
                    throw new PipelineDefinitionException(
                            file,
                            n,
                            l == null ? 1 : l.getColumnNr(),
                            "invalid JSON: " + e.getOriginalMessage() + "; each line must be one JSON object");
                }
                if (!node.isObject())
                    throw new PipelineDefinitionException(file, n, 1, "each line must be one JSON object");
                ObjectNode o = (ObjectNode) node;
                String id;
                if (spec.idField() != null) {
                    JsonNode v = o.get(spec.idField());
                    if (v == null
                            || !(v.isTextual() || v.isIntegralNumber())
                            || v.asText().isEmpty()) {
                        throw new PipelineDefinitionException(
                                file,
                                n,
                                1,
                                "seed has no string or integer '" + spec.idField() + "' (the pipeline's id_field)");
                    }
                    id = v.asText();
                } else {
                    id = "item-" + n;
                }
                Integer prev = ids.putIfAbsent(id, n);
                if (prev != null)
                    throw new PipelineDefinitionException(
                            file, n, 1, "duplicate item id '" + id + "' (first on line " + prev + ")");
                o.put("__id", id);
                out.add(o);
            }
        } catch (IOException e) {
            throw new PipelineDefinitionException(file, 0, 0, "cannot read seed input: " + e.getMessage());
        }
        return out;
    }

    /**
     * Seeds not yet in the log are created in batches of up to 256 (each batch one durable put).
     */
    private void createSeeds(List<ObjectNode> seeds) {
        CheckpointBatch.Builder b = null;
        List<Ctx> pendingCtx = new ArrayList<>();
        for (ObjectNode seed : seeds) {
            String id = seed.remove("__id").textValue();
            if (items.containsKey(id)) continue;
            if (b == null) b = CheckpointBatch.builder(runId, writer.epoch(), StepRef.NONE);
            ItemRef ref = ItemRef.root(id);
            var ie = b.item(ref, ItemSeq.FIRST).created(null);
            for (Iterator<Map.Entry<String, JsonNode>> it = seed.fields(); it.hasNext(); ) {
                var f = it.next();
                ie.set(f.getKey(), Json.toValue(f.getValue()));
            }
            Ctx c = new Ctx();
            c.ref = ref;
            c.fields = seed;
            c.next = ie.nextSeq();
            pendingCtx.add(c);
            if (pendingCtx.size() == 256) {
                flushSeeds(b, pendingCtx);
                b = null;
            }
        }
        if (b != null) flushSeeds(b, pendingCtx);
    }

    private void flushSeeds(CheckpointBatch.Builder b, List<Ctx> created) {
        writer.write(b.build());
        for (Ctx c : created) items.put(c.ref.itemId(), c);
        created.clear();
    }

    private void process() {
        ExecutorService pool = Executors.newFixedThreadPool(opts.workers(), r -> {
            Thread t = new Thread(r, "datagen-worker");
            t.setDaemon(true);
            return t;
        });
        AtomicInteger pending = new AtomicInteger();
        Object done = new Object();
        bar = opts.terminal() ? new ProgressBar("datagen " + opts.experiment(), items.size()) : null;
        try {
            List<Ctx> initial = new ArrayList<>(items.values());
            for (Ctx c : initial) {
                if (c.status != ItemStatus.RUNNING) {
                    finished.incrementAndGet();
                    continue;
                }
                submit(pool, c, pending, done);
            }
            if (bar != null) bar.stepTo(finished.get());
            synchronized (done) {
                while (pending.get() > 0 && fatal.get() == null) done.wait(200);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CancelledException("interrupted", e);
        } finally {
            pool.shutdownNow();
            try {
                pool.awaitTermination(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            if (bar != null) bar.close();
        }
        if (fatal.get() != null) throw fatal.get();
    }

    private void submit(ExecutorService pool, Ctx c, AtomicInteger pending, Object done) {
        pending.incrementAndGet();
        pool.execute(() -> {
            try {
                if (fatal.get() == null) {
                    List<Ctx> children = runItem(c);
                    for (Ctx child : children) {
                        if (bar != null) bar.maxHint(items.size());
                        submit(pool, child, pending, done);
                    }
                    report(c);
                }
            } catch (RuntimeException e) {
                fatal.compareAndSet(null, e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                if (pending.decrementAndGet() == 0 || fatal.get() != null) {
                    synchronized (done) {
                        done.notifyAll();
                    }
                }
            }
        });
    }

    private void report(Ctx c) {
        int n = finished.incrementAndGet();
        if (bar != null) {
            bar.stepTo(n);
        } else {
            ObjectNode o = Json.MAPPER
                    .createObjectNode()
                    .put("event", "item_finished")
                    .put("item_id", c.ref.itemId())
                    .put("status", c.status.name().toLowerCase(java.util.Locale.ROOT))
                    .put("finished", n)
                    .put("items", items.size());
            synchronized (opts.progress()) {
                opts.progress().println(Json.canonical(o));
                opts.progress().flush();
            }
        }
    }

    /** Runs the item's remaining steps; returns child items created by an expand step. */
    private List<Ctx> runItem(Ctx c) throws InterruptedException {
        List<StepSpec> steps = spec.steps();
        int start = c.createdBy == null ? 0 : (int) (c.createdBy + 1);
        for (int i = start; i < steps.size() && c.status == ItemStatus.RUNNING; i++) {
            StepSpec step = steps.get(i);
            boolean last = i == steps.size() - 1;
            String inst = instanceId(step.name(), i, null);
            if (c.completed.contains(inst)) continue;
            switch (step.kind()) {
                case FILTER -> {
                    boolean keep = step.condition().test(c.fields);
                    CheckpointBatch.Builder b =
                            CheckpointBatch.builder(runId, writer.epoch(), StepRef.of(step.name(), i, null, 1));
                    var ie = b.item(c.ref, c.next).stepCompleted();
                    if (!keep) ie.terminal(Terminal.FILTERED);
                    else if (last) ie.terminal(Terminal.COMPLETED);
                    commit(
                            c,
                            b,
                            ie.nextSeq(),
                            inst,
                            keep ? (last ? ItemStatus.COMPLETED : ItemStatus.RUNNING) : ItemStatus.FILTERED);
                }
                case EXPAND -> {
                    return expand(c, step, i, inst);
                }
                case LOOP -> runLoop(c, step, i, last);
                default -> runAttempts(c, step, i, null, inst, last);
            }
        }
        if (c.status == ItemStatus.RUNNING && start >= steps.size()) {
            // A child created by the last step: nothing left to do but complete it.
            CheckpointBatch.Builder b = CheckpointBatch.builder(runId, writer.epoch(), StepRef.NONE);
            var ie = b.item(c.ref, c.next).terminal(Terminal.COMPLETED);
            commit(c, b, ie.nextSeq(), null, ItemStatus.COMPLETED);
        }
        return List.of();
    }

    private void commit(Ctx c, CheckpointBatch.Builder b, ItemSeq next, String completedInstance, ItemStatus status) {
        writer.write(b.build()); // durable before we move on: the resume point
        c.next = next;
        if (completedInstance != null) c.completed.add(completedInstance);
        c.status = status;
    }

    /**
     * Runs one executable step (or loop iteration) with retries; false if the item failed
     * permanently.
     */
    private boolean runAttempts(Ctx c, StepSpec step, int index, Long iteration, String inst, boolean completesItem)
            throws InterruptedException {
        while (true) {
            int attempt = c.failures.getOrDefault(inst, 0) + 1;
            StepRef ref = StepRef.of(step.name(), index, iteration, attempt);
            Semaphore limit = stepLimits.get(step.name());
            ObjectNode updates;
            try {
                if (limit != null) limit.acquire();
                try {
                    updates = executor.run(step, c.ref.itemId(), c.fields.deepCopy(), attempt);
                } finally {
                    if (limit != null) limit.release();
                }
            } catch (StepFailure f) {
                boolean finalAttempt = attempt >= step.maxAttempts();
                CheckpointBatch.Builder b = CheckpointBatch.builder(runId, writer.epoch(), ref);
                var ie = b.item(c.ref, c.next).failed(f.errorType, f.dump, f.traceback, finalAttempt);
                commit(c, b, ie.nextSeq(), null, finalAttempt ? ItemStatus.FAILED : ItemStatus.RUNNING);
                c.failures.merge(inst, 1, Integer::sum);
                if (finalAttempt) return false;
                continue;
            }
            CheckpointBatch.Builder b = CheckpointBatch.builder(runId, writer.epoch(), ref);
            var ie = b.item(c.ref, c.next);
            for (Iterator<Map.Entry<String, JsonNode>> it = updates.fields(); it.hasNext(); ) {
                var f = it.next();
                ie.set(f.getKey(), Json.toValue(f.getValue()));
            }
            ie.stepCompleted();
            if (completesItem) ie.terminal(Terminal.COMPLETED);
            commit(c, b, ie.nextSeq(), inst, completesItem ? ItemStatus.COMPLETED : ItemStatus.RUNNING);
            c.fields.setAll(updates);
            return true;
        }
    }

    private void runLoop(Ctx c, StepSpec loop, int index, boolean last) throws InterruptedException {
        String loopInst = instanceId(loop.name(), index, null);
        long k = 1;
        while (c.completed.contains(instanceId(loop.body().name(), index, k))) k++;
        boolean satisfied = k > 1 && loop.condition().test(c.fields);
        for (; !satisfied && k <= loop.maxIterations(); k++) {
            if (!runAttempts(c, loop.body(), index, k, instanceId(loop.body().name(), index, k), false)) return;
            satisfied = loop.condition().test(c.fields);
        }
        CheckpointBatch.Builder b =
                CheckpointBatch.builder(runId, writer.epoch(), StepRef.of(loop.name(), index, null, 1));
        var ie = b.item(c.ref, c.next)
                .set(
                        "__" + loop.name() + "_iterations",
                        new dev.vigilo.checkpoint.FieldValue.IntValue(Math.min(k - 1, loop.maxIterations())))
                .stepCompleted();
        if (last) ie.terminal(Terminal.COMPLETED);
        commit(c, b, ie.nextSeq(), loopInst, last ? ItemStatus.COMPLETED : ItemStatus.RUNNING);
    }

    private List<Ctx> expand(Ctx c, StepSpec step, int index, String inst) {
        JsonNode list = c.fields.get(step.listField());
        StepRef ref = StepRef.of(step.name(), index, null, 1);
        CheckpointBatch.Builder b = CheckpointBatch.builder(runId, writer.epoch(), ref);
        if (list == null || !list.isArray()) {
            var ie = b.item(c.ref, c.next)
                    .failed(
                            "ExpandError",
                            "field '"
                                    + step.listField()
                                    + "' is "
                                    + (list == null ? "missing" : "not a list: " + Json.canonical(list)),
                            null,
                            true);
            commit(c, b, ie.nextSeq(), null, ItemStatus.FAILED);
            return List.of();
        }
        // The parent's STEP_COMPLETED and the children's creation are one batch: both or neither
        // after a crash.
        var pe = b.item(c.ref, c.next).stepCompleted().terminal(Terminal.COMPLETED);
        List<Ctx> children = new ArrayList<>();
        for (int k = 0; k < list.size(); k++) {
            ItemRef child = c.ref.child(c.ref.itemId() + "." + k);
            ObjectNode fields = c.fields.deepCopy();
            fields.remove(step.listField());
            fields.set(step.childField(), list.get(k));
            var ce = b.item(child, ItemSeq.FIRST).created(null);
            for (Iterator<Map.Entry<String, JsonNode>> it = fields.fields(); it.hasNext(); ) {
                var f = it.next();
                ce.set(f.getKey(), Json.toValue(f.getValue()));
            }
            Ctx cc = new Ctx();
            cc.ref = child;
            cc.fields = fields;
            cc.next = ce.nextSeq();
            cc.createdBy = (long) index;
            children.add(cc);
        }
        commit(c, b, pe.nextSeq(), inst, ItemStatus.COMPLETED);
        for (Ctx cc : children) items.put(cc.ref.itemId(), cc);
        return children;
    }
}
