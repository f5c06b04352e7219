package dev.vigilo.datagen;

import java.nio.file.Path;
import java.util.Locale;

/**
 * Test helper process: runs a pipeline (args: pipeline.yaml durableRoot experiment workers), one
 * {@code item_finished} JSON line per finished item on stdout.
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
        ExperimentStatus s = PipelineRunner.run(
                spec, new PipelineRunner.Options(args[1], args[2], Integer.parseInt(args[3]), lines));
        System.out.println("DONE " + s.toJson());
    }
}
