package dev.vigilo.common.input;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class TextEncodingTest {
    private static byte[] bytes(int... values) {
        byte[] b = new byte[values.length];
        for (int i = 0; i < values.length; i++) {
            b[i] = (byte) values[i];
        }
        return b;
    }

    @Test
    void byteOrderMarksOfOtherEncodingsAreNamed() {
        assertThat(TextEncoding.notUtf8(bytes(0xFF, 0xFE), 2))
                .contains(
                        "is UTF-16 (little-endian) text (it starts with the byte order mark FF FE); save it as UTF-8");
        assertThat(TextEncoding.notUtf8(bytes(0xFE, 0xFF, 0, 'a'), 4))
                .get()
                .asString()
                .contains("UTF-16 (big-endian)");
        assertThat(TextEncoding.notUtf8(bytes(0xFF, 0xFE, 0, 0, 'a', 0, 0, 0), 8))
                .get()
                .asString()
                .contains("UTF-32 (little-endian)", "FF FE 00 00");
        assertThat(TextEncoding.notUtf8(bytes(0, 0, 0xFE, 0xFF), 4))
                .get()
                .asString()
                .contains("UTF-32 (big-endian)");
        // Only the bytes given count, and UTF-8 (with or without its mark) is not another encoding.
        assertThat(TextEncoding.notUtf8(bytes(0xFF, 0xFE), 1)).isEmpty();
        assertThat(TextEncoding.notUtf8(bytes(0xEF, 0xBB, 0xBF, 'a'), 4)).isEmpty();
        assertThat(TextEncoding.notUtf8("name: x".getBytes(StandardCharsets.UTF_8), 7))
                .isEmpty();
    }

    @Test
    void theUtf8MarkIsMeasured() {
        assertThat(TextEncoding.utf8MarkLength(bytes(0xEF, 0xBB, 0xBF, '{'), 4)).isEqualTo(3);
        assertThat(TextEncoding.utf8MarkLength(bytes(0xEF, 0xBB), 2)).isZero();
        assertThat(TextEncoding.utf8MarkLength(bytes('{', '}'), 2)).isZero();
    }

    @Test
    void theFirstMalformedByteIsFoundByLineColumnAndOffset() {
        byte[] text = "ok: ü\nname: x\u00e9".getBytes(StandardCharsets.UTF_8);
        assertThat(TextEncoding.firstMalformed(text)).isEmpty();
        byte[] latin1 = "ok: \u00fc\nname: \u00e9!".getBytes(StandardCharsets.ISO_8859_1);
        TextEncoding.Malformed m = TextEncoding.firstMalformed(latin1).orElseThrow();
        assertThat(m.line()).isEqualTo(1);
        assertThat(m.column()).isEqualTo(5);
        assertThat(m.offset()).isEqualTo(4);
        assertThat(m.value()).isEqualTo(0xFC);
        assertThat(m.describe()).isEqualTo("bytes are not valid UTF-8 (byte 0xfc at byte offset 4 of the line)");
        byte[] second = "a\nbc\u00e9".getBytes(StandardCharsets.ISO_8859_1);
        m = TextEncoding.firstMalformed(second).orElseThrow();
        assertThat(m.line()).isEqualTo(2);
        assertThat(m.column()).isEqualTo(3);
        assertThat(m.offset()).isEqualTo(4);
        // A sequence cut off by the end of the bytes is at its first byte.
        m = TextEncoding.firstMalformed(bytes('a', 0xE2, 0x82)).orElseThrow();
        assertThat(m.column()).isEqualTo(2);
        assertThat(m.value()).isEqualTo(0xE2);
        // A range: lines and offsets count from its start.
        m = TextEncoding.firstMalformed(bytes('x', '\n', 'a', 0xFF, 'b'), 2, 5).orElseThrow();
        assertThat(m.line()).isEqualTo(1);
        assertThat(m.column()).isEqualTo(2);
        assertThat(m.offset()).isEqualTo(1);
    }
}
