package dev.vigilo.datagen;

import dev.vigilo.checkpoint.CheckpointLog;
import dev.vigilo.checkpoint.LogLocation;
import dev.vigilo.checkpoint.LogReader;
import dev.vigilo.checkpoint.LogRoot;
import dev.vigilo.checkpoint.LogWriter;
import dev.vigilo.checkpoint.WriterOptions;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;

/**
 * Runs a pipeline over its experiment's checkpoint log, resuming where the log says: a step whose
 * STEP_COMPLETED is in the log never runs again; every step's field updates and its STEP_COMPLETED
 * are one durable batch. Safe to kill -9 at any point and run again with the same arguments. One
 * run per experiment at a time (a second run fences the first, which then stops with an error).
 *
 * <p>A run: {@link SeedReader} validates the whole seed input (nothing is written if it is bad);
 * the log's fold becomes the items' mirrors ({@link RunItem}); {@link Checkpointer} creates the
 * seeds the log lacks; {@link ItemScheduler} runs every unfinished item through {@link ItemRunner}
 * on {@code workers} threads; the writer is flushed and closed; {@link EndOfRunMaintenance} runs.
 *
 * <p>Threads: the calling thread reads the seeds, folds the log, creates the seeds and coordinates
 * the scheduler; it alone calls {@link DatagenProgress} and keeps the counts. Each item's mirror is
 * owned by that thread until the item is scheduled, then by the worker that runs it. Writes to the
 * log come from the calling thread (seeds) and from workers (steps), each for items it owns, through
 * the one {@link LogWriter}, which serializes them.
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
     * @param durableRoot where the experiment's checkpoint log lives: a local directory or a prefix of
     *     a configured S3 store (see {@link LogRoot#resolve})
     * @param experiment experiment name
     * @param workers items processed concurrently (>= 1)
     * @param progress told the run's progress, from the calling thread ({@link DatagenProgress#NONE}:
     *     nothing)
     */
    public record Options(LogRoot durableRoot, String experiment, int workers, DatagenProgress progress) {
        public Options {
            Objects.requireNonNull(durableRoot, "durableRoot");
            Objects.requireNonNull(experiment, "experiment");
            Objects.requireNonNull(progress, "progress");
            if (workers < 1) throw new IllegalArgumentException("--workers must be >= 1, got " + workers);
        }
    }

    private final PipelineSpec spec;
    private final Options opts;

    private PipelineRunner(PipelineSpec spec, Options opts) {
        this.spec = spec;
        this.opts = opts;
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

    private ExperimentStatus run() {
        // Validates the whole input before anything is written.
        List<SeedReader.Seed> seeds = SeedReader.read(spec.input(), spec.idField());
        LogLocation loc = new LogLocation(opts.durableRoot(), spec.name(), opts.experiment());
        try (CheckpointLog log = CheckpointLog.openOrCreate(loc)) {
            LogWriter writer = log.openWriter(WRITER, WriterOptions.DEFAULTS);
            try {
                process(log, writer, seeds);
                writer.flush();
            } finally {
                writer.close();
            }
            EndOfRunMaintenance.run(log);
            return Experiments.status(log, spec.name(), opts.experiment());
        }
    }

    private void process(CheckpointLog log, LogWriter writer, List<SeedReader.Seed> seeds) {
        Checkpointer checkpointer = new Checkpointer(writer, UUID.randomUUID().toString());
        Map<String, RunItem> items = new LinkedHashMap<>();
        try (LogReader r = log.reader()) {
            r.foldAll().forEach((id, st) -> items.put(id, RunItem.of(st)));
        }
        List<SeedReader.Seed> newSeeds = new ArrayList<>();
        for (SeedReader.Seed seed : seeds) if (!items.containsKey(seed.id())) newSeeds.add(seed);
        for (RunItem item : checkpointer.createSeeds(newSeeds)) items.put(item.id(), item);

        Tally tally = new Tally(opts.progress());
        List<RunItem> unfinished = new ArrayList<>();
        for (RunItem item : items.values()) {
            if (item.isRunning()) unfinished.add(item);
            else tally.count(item.status());
        }
        tally.start(items.size());
        ItemRunner runner =
                new ItemRunner(spec.steps(), new StepExecutor(), new StepLimits(spec.steps()), checkpointer);
        ItemScheduler.runAll(opts.workers(), unfinished, runner::run, tally::finished);
    }

    /** The run's counts, kept and reported on the calling thread only. */
    private static final class Tally {
        private final DatagenProgress progress;
        private int items;
        private int finished;
        private int failed;

        Tally(DatagenProgress progress) {
            this.progress = progress;
        }

        /** One more finished item. */
        void count(ItemStatus status) {
            finished++;
            if (status == ItemStatus.FAILED) failed++;
        }

        void start(int known) {
            items = known;
            progress.started(finished, failed, items);
        }

        void finished(RunItem item, List<RunItem> spawned) {
            items += spawned.size();
            count(item.status());
            progress.itemFinished(item.id(), item.status(), finished, failed, items);
        }
    }
}
