package dev.vigilo.web;

import dev.vigilo.control.ControlDatabase;
import dev.vigilo.control.ControlSettings;
import dev.vigilo.exec.ExecutionConfig;
import dev.vigilo.exec.Placements;
import dev.vigilo.storage.StorageConfig;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * The dashboard alone in a process, for measurements under a small heap: {@code ServeMain CONTROL_JDBC_URL
 * STORE_ROOT}. Prints {@code port N} once listening and serves until its standard input closes.
 */
public final class ServeMain {
    private ServeMain() {}

    public static void main(String[] args) throws Exception {
        try (ControlDatabase control = ControlDatabase.open(new ControlSettings.Jdbc(args[0]));
                Placements placements = Placements.open(control, ExecutionConfig.defaults())) {
            DashboardSources sources = DashboardSources.all(
                    control.jdbi(),
                    placements,
                    StorageConfig.localDefault(Path.of(args[1])),
                    Optional.empty(),
                    List.of(),
                    List.of());
            try (Dashboard d =
                    Dashboard.start(new DashboardOptions(DashboardOptions.LOOPBACK, 0, Optional.empty()), sources)) {
                System.out.println("port " + d.port());
                System.out.flush();
                while (System.in.read() >= 0) {
                    // serve until the parent closes our standard input
                }
            }
        }
    }
}
