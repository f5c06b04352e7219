package dev.vigilo.exec.record;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vigilo.common.errors.DamagedException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import org.assertj.core.api.AbstractThrowableAssert;
import org.junit.jupiter.api.Test;

/** The run snapshot settlement, the worker and verify read is read as strictly as a receipt. */
class RunSnapshotParserTest {
    private static String written() throws IOException {
        return new String(FormatCompatibilityTest.resource("snapshot-v1.json"), StandardCharsets.UTF_8);
    }

    private static AbstractThrowableAssert<?, ?> damage(String json, String from, String to) {
        assertThat(json).contains(from);
        String changed = json.replace(from, to);
        return assertThatThrownBy(() -> RunSnapshotParser.fromJson(changed))
                .isInstanceOf(DamagedException.class)
                .hasMessageContaining("the execution database's run snapshot cannot be read");
    }

    @Test
    void aKeyGivenTwiceIsDamage() throws IOException {
        damage(written(), "\"chunks\":10,", "\"chunks\":10,\"chunks\":11,").hasMessageContaining("chunks");
    }

    @Test
    void aNewerVersionIsRefused() throws IOException {
        damage(written(), "\"version\":1,", "\"version\":4,")
                .hasMessageContaining("version 4 is not one this build reads [1, 2, 3]");
    }

    @Test
    void gatesDecidingOnTheirBoundAreVersionTwoAndReadBack() throws IOException {
        RunSnapshot v1 = FormatSamples.snapshot();
        RunSnapshot.Gate all = v1.gates().get(0);
        RunSnapshot bound = new RunSnapshot(
                v1.runId(),
                v1.planRoot(),
                v1.configuration(),
                v1.storageBinding(),
                v1.datasetUploadId(),
                v1.cases(),
                v1.chunks(),
                1,
                java.util.List.of(
                        new RunSnapshot.Gate(
                                all.name(),
                                all.requiredEvaluators(),
                                all.minPassRate(),
                                dev.vigilo.plan.Profile.Decide.BOUND,
                                dev.vigilo.stats.Confidence.of(0.99),
                                all.plannedCases()),
                        v1.gates().get(1)));
        String text = new String(RunSnapshotParser.toJson(bound), StandardCharsets.UTF_8);
        assertThat(text)
                .contains("\"version\":2,")
                .contains("\"min_pass_rate\":0.9,\"decide\":\"bound\",\"confidence\":0.99,\"planned_cases\":1000")
                .contains("\"min_pass_rate\":0.5,\"decide\":\"point\",\"confidence\":0.95,\"planned_cases\":120");
        assertThat(RunSnapshotParser.fromJson(text)).isEqualTo(bound);
        // Version 1 stays what it was: the reference file written before version 2 existed, byte for byte.
        assertThat(new String(RunSnapshotParser.toJson(v1), StandardCharsets.UTF_8))
                .isEqualTo(written());
        damage(text, "\"decide\":\"bound\",", "").hasMessageContaining("field \"decide\" is missing");
        damage(text, "\"bound\"", "\"maybe\"").hasMessageContaining("maybe");
    }

    @Test
    void aMissingFieldIsDamage() throws IOException {
        damage(written(), "\"cases\":1000,", "").hasMessageContaining("field \"cases\" is missing");
        damage(written(), ",\"planned_cases\":120", "")
                .hasMessageContaining("gate \"math\": field \"planned_cases\" is missing");
    }
}
