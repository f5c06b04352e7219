package dev.vigilo.datagen;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigilo.checkpoint.LogRoot;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The shipped example (examples/datagen/pipeline.yaml) runs offline and exports its completed
 * leaves.
 */
class ExamplePipelineTest {
    @TempDir
    Path dir;

    @Test
    void examplePipelineRunsOffline() throws Exception {
        Path yaml = Path.of("..", "examples", "datagen", "pipeline.yaml");
        PipelineSpec spec = PipelineParser.parse(yaml);
        ExperimentStatus s = PipelineRunner.run(
                spec, new PipelineRunner.Options(LogRoot.local(dir), "demo", 2, DatagenProgress.NONE));
        assertThat(s.items()).isEqualTo(10); // 4 seeds + 2 variants of each of the 3 kept seeds
        assertThat(s.filtered()).isEqualTo(1);
        assertThat(s.completed()).isEqualTo(9);
        assertThat(s.failed()).isZero();
        Path out = dir.resolve("out.jsonl");
        assertThat(Experiments.export(LogRoot.local(dir), "quiz", "demo", out)).isEqualTo(6);
        assertThat(Files.readAllLines(out)).allSatisfy(l -> {
            var n = Json.parse(l);
            assertThat(n.path("input").path("rounds").asInt()).isEqualTo(2);
            assertThat(n.path("input").path("question").asText()).startsWith("Explain ");
        });
    }

    @Test
    void dedupExampleKeepsTheFirstOfEachDuplicate() {
        PipelineSpec spec = PipelineParser.parse(Path.of("..", "examples", "datagen", "dedup.yaml"));
        ExperimentStatus s = PipelineRunner.run(
                spec, new PipelineRunner.Options(LogRoot.local(dir), "demo", 3, DatagenProgress.NONE));
        assertThat(s.completed()).isEqualTo(4); // t1, t3, t5, t6
        assertThat(s.filteredByStep())
                .containsExactlyInAnyOrderEntriesOf(java.util.Map.of("good", 1L, "unique", 1L, "near_unique", 1L));
        assertThat(Experiments.item(LogRoot.local(dir), "questions", "demo", "t2")
                        .orElseThrow()
                        .path("filtered_by")
                        .path("duplicate_of")
                        .asText())
                .isEqualTo("t1");
        assertThat(Experiments.item(LogRoot.local(dir), "questions", "demo", "t4")
                        .orElseThrow()
                        .path("filtered_by")
                        .path("duplicate_of")
                        .asText())
                .isEqualTo("t3");
    }
}
