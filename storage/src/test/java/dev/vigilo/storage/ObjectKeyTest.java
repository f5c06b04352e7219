package dev.vigilo.storage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

class ObjectKeyTest {
    /** The segment rule as the documentation states it, to check the character loop against. */
    private static final Pattern SEGMENT = Pattern.compile("[A-Za-z0-9_-][A-Za-z0-9._-]*");

    @Test
    void acceptsExactlyTheDocumentedSegments() {
        List<String> samples = List.of(
                "a",
                "runs/0f/transcripts/0000000042/g1-c3.jsonl.zstd",
                "datasets/blobs/ab/ab12",
                "_x/-y/z.",
                "a..b/c",
                ".hidden",
                "a/.tmp",
                "a/./b",
                "a/../b",
                "a//b",
                "/a",
                "a/",
                "a b",
                "ä",
                "a/b:c",
                "A-Z_0-9");
        for (String key : samples) {
            boolean documented = java.util.Arrays.stream(key.split("/", -1))
                    .allMatch(s -> SEGMENT.matcher(s).matches());
            if (documented) {
                assertThat(ObjectKey.of(key).value()).isEqualTo(key);
            } else {
                assertThatThrownBy(() -> ObjectKey.of(key))
                        .as(key)
                        .isInstanceOf(IllegalArgumentException.class)
                        .hasMessageContaining("invalid segment");
            }
        }
    }

    @Test
    void namesTheBadSegment() {
        assertThatThrownBy(() -> ObjectKey.of("runs/x y/z"))
                .hasMessage("object key \"runs/x y/z\" has an invalid segment \"x y\""
                        + " (segments are [A-Za-z0-9._-], non-empty, not starting with '.')");
    }

    @Test
    void padsNumbersLikeTheFormatter() {
        for (long v : new long[] {0, 7, 99, 100, 123_456_789, 9_999_999_999L, 12_345_678_901L, -5}) {
            assertThat(ObjectKey.zeroPadded(v, 10)).isEqualTo(String.format("%010d", v));
            assertThat(ObjectKey.zeroPadded(v, 2)).isEqualTo(String.format("%02d", v));
        }
    }
}
