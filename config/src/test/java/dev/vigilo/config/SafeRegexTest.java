package dev.vigilo.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.re2j.Matcher;
import com.google.re2j.Pattern;
import dev.vigilo.common.errors.InvalidInputException;
import java.time.Duration;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

class SafeRegexTest {
    /** Each pattern with a text it must find and a text it must not: compiling alone proves nothing. */
    static Stream<Arguments> ordinaryAndAdversarialButSmallPatterns() {
        return Stream.of(
                Arguments.of("(a+)+$", "aaa", "aaab"),
                Arguments.of("^-?[0-9]+(\\.[0-9]+)?$", "-12.5", "12."),
                Arguments.of("\\d{1,3}(\\.\\d{1,3}){3}", "10.0.0.1", "10.0.1"),
                Arguments.of("[a-z]{1000}", "a".repeat(1000), "a".repeat(999)),
                Arguments.of("(?i)paris|lyon", "PARIS", "berlin"),
                Arguments.of("\\p{Greek}+\\x{10FFFF}", "\u03b1\u03b2\udbff\udfff", "ab\udbff\udfff"),
                Arguments.of("[]a{1000}]{2}", "x]}", "xy"),
                Arguments.of("\\Q{1000}{1000}\\E", "{1000}{1000}", "{1000}"),
                Arguments.of("(a{100}){100}", "a".repeat(10_000), "a".repeat(9_999)),
                Arguments.of("(?P<year>\\d{4})-(?P<month>\\d{2})", "on 2024-05-01", "24-05"));
    }

    @ParameterizedTest
    @MethodSource("ordinaryAndAdversarialButSmallPatterns")
    void ordinaryAndAdversarialButSmallPatternsCompileAndMatch(String pattern, String match, String noMatch) {
        assertThat(SafeRegex.estimatedSize(pattern)).isLessThanOrEqualTo(SafeRegex.MAX_PROGRAM_SIZE);
        Pattern compiled = SafeRegex.compile(pattern);
        assertThat(compiled.matcher(match).find())
                .as("%s finds its example", pattern)
                .isTrue();
        assertThat(compiled.matcher(noMatch).find())
                .as("%s does not find its counter-example", pattern)
                .isFalse();
    }

    @org.junit.jupiter.api.Test
    void namedGroupsCaptureAndNestedQuantifiersDoNotBacktrack() {
        Matcher date = SafeRegex.compile("(?P<year>\\d{4})-(?P<month>\\d{2})").matcher("on 2024-05-01");
        assertThat(date.find()).isTrue();
        assertThat(date.group("year")).isEqualTo("2024");
        assertThat(date.group("month")).isEqualTo("05");
        // A backtracking engine takes exponential time on this text; RE2/J answers in linear time.
        assertThat(SafeRegex.compile("(a+)+$").matcher("a".repeat(50_000) + "!").find())
                .isFalse();
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
