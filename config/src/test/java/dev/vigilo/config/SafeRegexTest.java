package dev.vigilo.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vigilo.common.errors.InvalidInputException;
import java.time.Duration;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class SafeRegexTest {
    @ParameterizedTest
    @ValueSource(
            strings = {
                "(a+)+$",
                "^-?[0-9]+(\\.[0-9]+)?$",
                "\\d{1,3}(\\.\\d{1,3}){3}",
                "[a-z]{1000}",
                "(?i)paris|lyon",
                "\\p{Greek}+\\x{10FFFF}",
                "[]a{1000}]{2}",
                "\\Q{1000}{1000}\\E",
                "(a{100}){100}",
                "(?P<year>\\d{4})-(?P<month>\\d{2})",
            })
    void ordinaryAndAdversarialButSmallPatternsCompile(String pattern) {
        assertThat(SafeRegex.estimatedSize(pattern)).isLessThanOrEqualTo(SafeRegex.MAX_PROGRAM_SIZE);
        assertThat(SafeRegex.compile(pattern)).isNotNull();
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "((a{1000}){1000}){1000}",
                "(a{1000}){1000}",
                "((((((x{10}){10}){10}){10}){10}){10})",
                "(?:[a-z]{1000}){200}",
            })
    void patternsThatWouldExplodeAreRejectedBeforeCompiling(String pattern) {
        long start = System.nanoTime();
        assertThatThrownBy(() -> SafeRegex.compile(pattern))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageStartingWith("regular expression is too large");
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(2));
    }

    @ParameterizedTest
    @ValueSource(strings = {"(", "a{1001}", "(?=x)", "\\1", "a**", "[z-a]"})
    void syntaxErrorsAreReportedOnOneLine(String pattern) {
        assertThatThrownBy(() -> SafeRegex.compile(pattern))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageStartingWith("invalid regular expression: ")
                .hasMessageContaining("RE2 syntax")
                .hasMessageNotContaining("\n");
    }

    @org.junit.jupiter.api.Test
    void deepNestingIsBoundedToWhatRe2jCanCompile() {
        String ok = "(".repeat(SafeRegex.MAX_NESTING) + "a" + ")".repeat(SafeRegex.MAX_NESTING);
        assertThat(SafeRegex.compile(ok).matcher("a").find()).isTrue();
        String deep = "(".repeat(SafeRegex.MAX_NESTING + 1) + "a" + ")".repeat(SafeRegex.MAX_NESTING + 1);
        assertThatThrownBy(() -> SafeRegex.compile(deep)).hasMessageContaining("nested groups");
    }

    @org.junit.jupiter.api.Test
    void theEstimateGrowsWithNestedRepetition() {
        assertThat(SafeRegex.estimatedSize("abc")).isEqualTo(3);
        assertThat(SafeRegex.estimatedSize("a{10}")).isBetween(10L, 30L);
        assertThat(SafeRegex.estimatedSize("(a{10}){10}")).isBetween(100L, 300L);
        assertThat(SafeRegex.estimatedSize("a{10}b{10}")).isBetween(20L, 60L);
    }
}
