package dev.vigilo.datagen;

import dev.vigilo.checkpoint.LogRoot;
import dev.vigilo.storage.StorageConfig;
import java.nio.file.Path;

/**
 * Test helper process: runs a pipeline (args: pipeline.yaml durableRoot experiment workers
 * [storage.toml]), JSON progress on stdout. The durable root resolves as the CLI resolves it: a
 * local directory, or s3://... or store:NAME through the storage configuration.
 */
public final class RunMain {
    public static void main(String[] args) {
        PipelineSpec spec = PipelineParser.parse(Path.of(args[0]));
        LogRoot root = LogRoot.resolve(args[1], () -> StorageConfig.load(Path.of(args[4])));
        ExperimentStatus s = PipelineRunner.run(
                spec, new PipelineRunner.Options(root, args[2], Integer.parseInt(args[3]), System.out, false));
        System.out.println("DONE " + s.toJson());
    }
}
