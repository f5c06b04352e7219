package dev.vigilo.checkpoint;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** Query tags are read strictly: a key given twice is not one JSON object, and a lenient last-wins is no answer. */
class CheckpointBatchTagsTest {
    @Test
    void queryTagsWithAKeyGivenTwiceAreRefused() {
        assertThat(CheckpointBatch.parseTags("{\"b\":1,\"a\":2}").size()).isEqualTo(2);
        assertThatThrownBy(() -> CheckpointBatch.parseTags("{\"a\":1,\"a\":2}"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("must be one JSON object");
        assertThatThrownBy(() -> CheckpointBatch.parseTags("{\"a\":1} {\"b\":2}"))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void storedTagsGivingFinalAttemptTwiceMarkNothing() {
        assertThat(CheckpointBatch.isFinalAttempt("{\"final_attempt\":true}")).isTrue();
        assertThat(CheckpointBatch.isFinalAttempt("{\"final_attempt\":false,\"final_attempt\":true}"))
                .isFalse();
    }
}
