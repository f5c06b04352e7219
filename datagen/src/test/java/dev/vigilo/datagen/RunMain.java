package dev.vigilo.datagen;

import java.nio.file.Path;

/**
 * Test helper process: runs a pipeline (args: pipeline.yaml durableRoot experiment workers), JSON
 * progress on stdout.
 */
public final class RunMain {
    public static void main(String[] args) {
        PipelineSpec spec = PipelineParser.parse(Path.of(args[0]));
        ExperimentStatus s = PipelineRunner.run(
                spec, new PipelineRunner.Options(args[1], args[2], Integer.parseInt(args[3]), System.out, false));
        System.out.println("DONE " + s.toJson());
    }
}
