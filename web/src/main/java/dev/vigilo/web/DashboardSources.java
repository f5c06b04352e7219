package dev.vigilo.web;

import dev.vigilo.checkpoint.LogRoot;
import dev.vigilo.exec.Placements;
import dev.vigilo.storage.StorageConfig;
import java.nio.file.Path;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import org.jdbi.v3.core.Jdbi;

/**
 * What the dashboard reads. The caller owns everything here and closes it after the dashboard.
 *
 * @param databases     the control and execution databases and the storage configuration: runs and datasets are shown
 *                      only with them (a transcript viewer alone needs none)
 * @param datagenRoot   where datagen experiments live, when the dashboard shows them
 * @param sessionFiles  session logs named on the command line ({@code vigilo session view FILE}): always viewable
 * @param sessionRoots  directories whose session logs may be opened by path (Vigilo home); nothing outside them or
 *                      {@code sessionFiles} is ever read
 * @param workerCommand the command line that starts a worker for this installation, which a run page shows while no
 *                      worker works on its run ({@code vigilo serve} gives its own launcher and options;
 *                      {@link #DEFAULT_WORKER_COMMAND} otherwise)
 */
public record DashboardSources(
        Optional<Databases> databases,
        Optional<LogRoot> datagenRoot,
        List<Path> sessionFiles,
        List<Path> sessionRoots,
        String workerCommand) {
    /** The worker command shown when the caller gives none. */
    public static final String DEFAULT_WORKER_COMMAND = "vigilo worker --exit-when-idle";

    public DashboardSources {
        Objects.requireNonNull(databases, "databases");
        Objects.requireNonNull(datagenRoot, "datagenRoot");
        Objects.requireNonNull(workerCommand, "workerCommand");
        sessionFiles = List.copyOf(sessionFiles);
        sessionRoots = List.copyOf(sessionRoots);
    }

    /** As the canonical constructor, with {@link #DEFAULT_WORKER_COMMAND}. */
    public DashboardSources(
            Optional<Databases> databases,
            Optional<LogRoot> datagenRoot,
            List<Path> sessionFiles,
            List<Path> sessionRoots) {
        this(databases, datagenRoot, sessionFiles, sessionRoots, DEFAULT_WORKER_COMMAND);
    }

    /** These sources with another worker command line. */
    public DashboardSources withWorkerCommand(String command) {
        return new DashboardSources(databases, datagenRoot, sessionFiles, sessionRoots, command);
    }

    /**
     * @param control    the control database
     * @param placements the execution databases this process reaches
     * @param storage    the storage configuration (datasets, plans, receipts)
     */
    public record Databases(Jdbi control, Placements placements, StorageConfig storage) {
        public Databases {
            Objects.requireNonNull(control, "control");
            Objects.requireNonNull(placements, "placements");
            Objects.requireNonNull(storage, "storage");
        }
    }

    /** Everything: runs, datasets, datagen experiments and transcripts. */
    public static DashboardSources all(
            Jdbi control,
            Placements placements,
            StorageConfig storage,
            Optional<LogRoot> datagenRoot,
            List<Path> sessionFiles,
            List<Path> sessionRoots) {
        return new DashboardSources(
                Optional.of(new Databases(control, placements, storage)), datagenRoot, sessionFiles, sessionRoots);
    }

    /** A transcript viewer over the given session logs only. */
    public static DashboardSources transcripts(List<Path> sessionFiles) {
        return new DashboardSources(Optional.empty(), Optional.empty(), sessionFiles, List.of());
    }
}
