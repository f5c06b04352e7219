package dev.vigilo.datagen;

import dev.vigilo.checkpoint.LogRoot;
import dev.vigilo.common.errors.ConflictException;
import dev.vigilo.control.ControlDatabase;
import dev.vigilo.control.ControlSettings;
import dev.vigilo.storage.StorageConfig;
import java.nio.file.Path;
import java.util.Locale;

/**
 * Test helper process: runs a pipeline (args: pipeline.yaml durableRoot experiment workers
 * [storage.toml]), one {@code item_finished} JSON line per finished item on stdout. The durable root
 * resolves as the CLI resolves it: a local directory, or s3://... or store:NAME through the storage
 * configuration. With {@code VIGILO_CONTROL_DB} set (a JDBC URL, as the CLI reads it), the run uses that control
 * database (fleet limiters, budget); a run refused by its budget prints {@code BUDGET <message>} and exits 4.
 */
public final class RunMain {
    public static void main(String[] args) {
        PipelineSpec spec = PipelineParser.parse(Path.of(args[0]));
        DatagenProgress lines = new DatagenProgress() {
            @Override
            public void started(int finished, int failed, int items) {}

            @Override
            public void itemFinished(String itemId, ItemStatus status, int finished, int failed, int items) {
                System.out.println(Json.canonical(Json.MAPPER
                        .createObjectNode()
                        .put("event", "item_finished")
                        .put("item_id", itemId)
                        .put("status", status.name().toLowerCase(Locale.ROOT))
                        .put("finished", finished)
                        .put("items", items)));
                System.out.flush();
            }
        };
        LogRoot root = LogRoot.resolve(args[1], () -> StorageConfig.load(Path.of(args[4])));
        PipelineRunner.Options options = new PipelineRunner.Options(root, args[2], Integer.parseInt(args[3]), lines);
        String control = System.getenv("VIGILO_CONTROL_DB");
        if (control == null) {
            ExperimentStatus s = PipelineRunner.run(spec, options);
            System.out.println("DONE " + s.toJson());
            return;
        }
        try (ControlDatabase db = ControlDatabase.open(new ControlSettings.Jdbc(control))) {
            ExperimentStatus s = PipelineRunner.run(spec, options.withControl(db.jdbi()));
            System.out.println("DONE " + s.toJson());
        } catch (ConflictException e) {
            System.out.println("BUDGET " + e.getMessage());
            System.out.flush();
            System.exit(4);
        }
    }
}
