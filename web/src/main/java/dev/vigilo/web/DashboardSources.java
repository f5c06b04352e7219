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
 */
public record DashboardSources(
        Optional<Databases> databases,
        Optional<LogRoot> datagenRoot,
        List<Path> sessionFiles,
        List<Path> sessionRoots) {
    public DashboardSources {
        Objects.requireNonNull(databases, "databases");
        Objects.requireNonNull(datagenRoot, "datagenRoot");
        sessionFiles = List.copyOf(sessionFiles);
        sessionRoots = List.copyOf(sessionRoots);
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
