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
 * What the dashboard reads: the control database, the execution databases, the storage configuration, the datagen
 * durable root, and the session logs it may open by path. The caller owns them and closes them after the dashboard.
 *
 * @param control       the control database
 * @param placements    the execution databases this process reaches
 * @param storage       the storage configuration (datasets, plans, receipts)
 * @param datagenRoot   where datagen experiments live, when the dashboard shows them
 * @param sessionFiles  session logs named on the command line ({@code vigilo session view FILE}): always viewable
 * @param sessionRoots  directories whose session logs may be opened by path (Vigilo home); nothing outside them or
 *                      {@code sessionFiles} is ever read
 */
public record DashboardSources(
        Jdbi control,
        Placements placements,
        StorageConfig storage,
        Optional<LogRoot> datagenRoot,
        List<Path> sessionFiles,
        List<Path> sessionRoots) {
    public DashboardSources {
        Objects.requireNonNull(control, "control");
        Objects.requireNonNull(placements, "placements");
        Objects.requireNonNull(storage, "storage");
        Objects.requireNonNull(datagenRoot, "datagenRoot");
        sessionFiles = List.copyOf(sessionFiles);
        sessionRoots = List.copyOf(sessionRoots);
    }
}
