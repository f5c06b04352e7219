package dev.vigilo.datagen;

/**
 * Receives a run's progress. Every call comes from the thread that called {@link
 * PipelineRunner#run}, one at a time and never concurrently, so an implementation needs no locking.
 * {@link #started} comes first, once; then {@link #itemFinished} once per item that finishes in
 * this run. Counts include the items that earlier runs of the experiment finished.
 */
public interface DatagenProgress {
    /**
     * The seeds are in the log and the items that remain are about to run.
     *
     * @param finished items that are already completed, filtered or failed
     * @param failed of which failed
     * @param items items known to the run
     */
    void started(int finished, int failed, int items);

    /**
     * One item's run ended in this run.
     *
     * @param itemId the item
     * @param status where the item stands now: completed, filtered or failed (running only if the
     *     log left it nothing to run)
     * @param finished items finished so far, this one included
     * @param failed of which failed
     * @param items items known to the run (grows when an expand step creates children)
     */
    void itemFinished(String itemId, ItemStatus status, int finished, int failed, int items);

    /** Ignores everything. */
    DatagenProgress NONE = new DatagenProgress() {
        @Override
        public void started(int finished, int failed, int items) {}

        @Override
        public void itemFinished(String itemId, ItemStatus status, int finished, int failed, int items) {}
    };
}
