package dev.vigilo.exec;

import dev.vigilo.exec.admission.Admission;
import dev.vigilo.exec.settlement.Settlement;
import java.io.IOException;
import java.nio.file.Path;
import java.util.UUID;

/**
 * A large executed run for the dashboard's size tests and benchmark: a fresh control database, a dataset of
 * {@code cases} cases, a prepared and admitted run whose every chunk the simulated worker of exec's tests completes
 * with real receipts (deterministic outcomes: passed, failed and errored cases), then settled. Lives in exec's package
 * because the simulated worker and settlement are package-private there.
 */
public final class LargeRun implements AutoCloseable {
    private final ExecFixture fixture;
    private final Placements placements;
    private final UUID runId;

    private LargeRun(ExecFixture fixture, Placements placements, UUID runId) {
        this.fixture = fixture;
        this.placements = placements;
        this.runId = runId;
    }

    /** Builds it under {@code dir}; prints how long each phase took. */
    public static LargeRun build(Path dir, int cases) throws IOException {
        long t0 = System.nanoTime();
        ExecFixture fx = new ExecFixture(dir, cases);
        long t1 = System.nanoTime();
        Placements placements = Placements.open(fx.control, ExecutionConfig.defaults());
        UUID run = fx.prepare();
        new Admission(placements, fx.storage).admit(run);
        long t2 = System.nanoTime();
        int chunks = new SimulatedWorker(placements, fx.store, run).run(Integer.MAX_VALUE);
        new Settlement(placements).settleIfComplete(run);
        long t3 = System.nanoTime();
        System.out.printf(
                "large run: %d cases uploaded in %.1f s, prepared and admitted in %.1f s, %d chunks executed and"
                        + " settled in %.1f s%n",
                cases, (t1 - t0) / 1e9, (t2 - t1) / 1e9, chunks, (t3 - t2) / 1e9);
        return new LargeRun(fx, placements, run);
    }

    /**
     * Prepares, executes (the same simulated worker, so the same outcomes) and settles one more run of the same dataset
     * in the same databases, for the matrix; prints how long it took.
     */
    public UUID addRun() {
        long t0 = System.nanoTime();
        UUID run = fixture.prepare();
        new Admission(placements, fixture.storage).admit(run);
        int chunks = new SimulatedWorker(placements, fixture.store, run).run(Integer.MAX_VALUE);
        new Settlement(placements).settleIfComplete(run);
        System.out.printf(
                "another run: %d chunks prepared, executed and settled in %.1f s%n",
                chunks, (System.nanoTime() - t0) / 1e9);
        return run;
    }

    public UUID runId() {
        return runId;
    }

    public UUID datasetId() {
        return fixture.dataset.uploadId();
    }

    /** The JDBC URL of its control database. */
    public String controlUrl() {
        return fixture.controlUrl;
    }

    /** The root of its local object store. */
    public Path storeRoot() {
        return fixture.storeRoot;
    }

    public String status() {
        return fixture.runStatus(runId);
    }

    @Override
    public void close() {
        placements.close();
        fixture.close();
    }
}
