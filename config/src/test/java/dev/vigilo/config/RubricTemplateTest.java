package dev.vigilo.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vigilo.common.errors.InvalidInputException;
import java.util.Map;
import org.junit.jupiter.api.Test;

class RubricTemplateTest {
    @Test
    void rendersKnownPlaceholdersAndLeavesOtherBracesAlone() {
        RubricTemplate t =
                RubricTemplate.parse("{{input}}|{{ output }}|{{case.id}}|{{metadata.a.b}}|{\"x\":{\"y\":1}}|{{");
        Map<String, String> v = Map.of("input", "I", "output", "O", "case.id", "C", "metadata.a.b", "M");
        assertThat(t.render(v::get)).isEqualTo("I|O|C|M|{\"x\":{\"y\":1}}|{{");
        assertThat(t.uses("output")).isTrue();
        assertThat(t.uses("expected")).isFalse();
    }

    @Test
    void anUnknownPlaceholderIsRefusedNamingTheKnownOnes() {
        assertThatThrownBy(() -> RubricTemplate.parse("Grade {{ foo }} now"))
                .isInstanceOf(InvalidInputException.class)
                .hasMessage("unknown placeholder {{foo}}; known: {{input}}, {{output}}, {{expected}}, {{case.id}},"
                        + " {{metadata.KEY}}");
        assertThatThrownBy(() -> RubricTemplate.parse("{{metadata.}}")).hasMessageContaining("{{metadata.}}");
        assertThatThrownBy(() -> RubricTemplate.parse("{{}}")).hasMessageContaining("{{}}");
    }
}
