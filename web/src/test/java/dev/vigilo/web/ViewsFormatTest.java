package dev.vigilo.web;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** How the pages write counts and sizes (the script writes the counts it updates the same way). */
class ViewsFormatTest {
    @Test
    void countsHaveThousandsSeparators() {
        assertThat(Views.count(0)).isEqualTo("0");
        assertThat(Views.count(999)).isEqualTo("999");
        assertThat(Views.count(5_000)).isEqualTo("5,000");
        assertThat(Views.count(1_234_567_890L)).isEqualTo("1,234,567,890");
    }

    @Test
    void sizesInBinaryUnitsWithTheExactCount() {
        assertThat(Views.bytes(1)).isEqualTo("1 byte");
        assertThat(Views.bytes(1023)).isEqualTo("1023 bytes");
        assertThat(Views.bytes(505_313)).isEqualTo("493.5 KiB (505,313 bytes)");
        assertThat(Views.bytes(12L << 20)).isEqualTo("12.0 MiB (12,582,912 bytes)");
        assertThat(Views.bytes(3L << 40)).isEqualTo("3.0 TiB (3,298,534,883,328 bytes)");
    }
}
