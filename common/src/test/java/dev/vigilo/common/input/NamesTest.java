package dev.vigilo.common.input;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vigilo.common.errors.InvalidInputException;
import org.junit.jupiter.api.Test;

class NamesTest {
    @Test
    void segmentsAreSafePathSegments() {
        assertThat(Names.segment("exp-1.v2_b", "--experiment")).isEqualTo("exp-1.v2_b");
        for (String bad : new String[] {"..", "../ref", ".hidden", "a/b", "", "a b", "x".repeat(129), "a\nb"}) {
            assertThatThrownBy(() -> Names.segment(bad, "--experiment"))
                    .as(bad)
                    .isInstanceOf(InvalidInputException.class)
                    .hasMessageStartingWith("--experiment: ")
                    .hasMessageContaining("not starting with '.'")
                    .hasMessageNotContaining("\n");
        }
    }

    @Test
    void labelsArePrintable() {
        assertThat(Names.label("Quiz — 2024 (ünïcode)", "--name")).isEqualTo("Quiz — 2024 (ünïcode)");
        for (String bad : new String[] {"a\nb", "a\rb", "tab\there", "\u001b[2Jclear", "bell\u0007", "zw\u200bsp"}) {
            assertThatThrownBy(() -> Names.label(bad, "--name"))
                    .as(bad)
                    .isInstanceOf(InvalidInputException.class)
                    .hasMessageContaining("control character U+")
                    .hasMessageNotContaining("\n")
                    .hasMessageNotContaining("\u001b");
        }
        assertThatThrownBy(() -> Names.label(" ", "--name")).hasMessage("--name: a name must not be empty");
        assertThatThrownBy(() -> Names.label("x".repeat(257), "--name")).hasMessageContaining("at most 256");
    }

    @Test
    void labelsWithTheReplacementCharacterAreRefused() {
        // The JVM decodes argv (and file names) with the platform charset and puts U+FFFD where bytes do not
        // decode: such a name is not what the user typed, so it is refused rather than stored.
        for (String bad : new String[] {"ab\ufffdcd", "\ufffd"}) {
            assertThatThrownBy(() -> Names.label(bad, "--name"))
                    .as(bad)
                    .isInstanceOf(InvalidInputException.class)
                    .hasMessageStartingWith("--name: ")
                    .hasMessageContaining("U+FFFD")
                    .hasMessageContaining("not valid in this system's character encoding")
                    .hasMessageNotContaining("\n")
                    .hasMessageNotContaining("\ufffd");
        }
    }

    @Test
    void printableEscapesWhatATerminalWouldInterpret() {
        assertThat(Names.printable("a\u001b[31mb\nc\\d")).isEqualTo("a\\u001b[31mb\\u000ac\\d");
        assertThat(Names.printable("plain — ü")).isEqualTo("plain — ü");
    }
}
