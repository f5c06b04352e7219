package dev.vigilo.common.input;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vigilo.common.errors.InvalidInputException;
import java.util.UUID;
import org.junit.jupiter.api.Test;

class IdsTest {
    @Test
    void everyPrintedIdParsesBackToItself() {
        for (int i = 0; i < 200; i++) {
            UUID id = UUID.randomUUID();
            assertThat(Ids.uuid(id.toString(), "--run-id", "run id", "check it"))
                    .isEqualTo(id);
        }
        UUID edge = new UUID(-1, 1);
        assertThat(Ids.uuid(edge.toString(), "--run-id", "run id", "check it")).isEqualTo(edge);
    }

    @Test
    void lenientAndNonCanonicalSpellingsAreRefused() {
        for (String text : new String[] {
            "1-2-3-4-5",
            "3F2B6C1E-8D4A-4E7B-9C0D-1A2B3C4D5E6F",
            "{3f2b6c1e-8d4a-4e7b-9c0d-1a2b3c4d5e6f}",
            "3f2b6c1e8d4a4e7b9c0d1a2b3c4d5e6f",
            " 3f2b6c1e-8d4a-4e7b-9c0d-1a2b3c4d5e6f",
            "3f2b6c1e-8d4a-4e7b-9c0d-1a2b3c4d5e6f0",
            "",
            "not-a-uuid\u001b[31m"
        }) {
            assertThatThrownBy(() -> Ids.uuid(text, "--upload-id", "upload id", "see `vigilo dataset list`"))
                    .as(text)
                    .isInstanceOf(InvalidInputException.class)
                    .hasMessageStartingWith("--upload-id: ")
                    .hasMessageContaining("is not an upload id: expected a lowercase UUID")
                    .hasMessageEndingWith("see `vigilo dataset list`")
                    .hasMessageNotContaining("\u001b");
        }
    }

    @Test
    void theNilUuidIsRefused() {
        assertThatThrownBy(() -> Ids.uuid("00000000-0000-0000-0000-000000000000", "RUN_ID", "run id", "check it"))
                .isInstanceOf(InvalidInputException.class)
                .hasMessage("RUN_ID: the nil UUID is not a valid run id; check it");
    }
}
