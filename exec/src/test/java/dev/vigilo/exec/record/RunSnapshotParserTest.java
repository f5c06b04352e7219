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
        damage(written(), "\"version\":1,", "\"version\":2,")
                .hasMessageContaining("version 2 is not one this build reads [1]");
    }

    @Test
    void aMissingFieldIsDamage() throws IOException {
        damage(written(), "\"cases\":1000,", "").hasMessageContaining("field \"cases\" is missing");
        damage(written(), ",\"planned_cases\":120", "")
                .hasMessageContaining("gate \"math\": field \"planned_cases\" is missing");
    }
}
