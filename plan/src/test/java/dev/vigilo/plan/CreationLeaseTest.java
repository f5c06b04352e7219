package dev.vigilo.plan;

import static org.assertj.core.api.Assertions.assertThat;

import java.math.BigDecimal;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/** How a held creation lease is rounded and described. */
class CreationLeaseTest {
    @Test
    void expiryAndCountdownRoundUpSoTheRunIsReclaimableAtTheInstantShown() {
        // 2026-11-30T05:47:17.798190Z, seen 251.5 s earlier.
        BigDecimal expires = new BigDecimal("1796017637.798190");
        CreationLease l = CreationLease.of(expires, expires.subtract(new BigDecimal("251.5")));
        assertThat(l.expiresAt()).isEqualTo(Instant.parse("2026-11-30T05:47:18Z"));
        assertThat(l.reclaimableInSeconds()).isEqualTo(252);
        assertThat(l.describe()).isEqualTo("reclaimable in 4m 12s, at 2026-11-30T05:47:18Z");

        // A whole-second expiry stays as it is; a lease about to expire is still at least 1 s away.
        CreationLease edge = CreationLease.of(new BigDecimal("1796017637"), new BigDecimal("1796017636.999999"));
        assertThat(edge.expiresAt()).isEqualTo(Instant.parse("2026-11-30T05:47:17Z"));
        assertThat(edge.reclaimableInSeconds()).isEqualTo(1);
        assertThat(CreationLease.of(new BigDecimal("100"), new BigDecimal("100"))
                        .reclaimableInSeconds())
                .isEqualTo(1);
    }

    @Test
    void durationsReadAsHoursMinutesSeconds() {
        assertThat(CreationLease.duration(1)).isEqualTo("1s");
        assertThat(CreationLease.duration(59)).isEqualTo("59s");
        assertThat(CreationLease.duration(60)).isEqualTo("1m 0s");
        assertThat(CreationLease.duration(300)).isEqualTo("5m 0s");
        assertThat(CreationLease.duration(3605)).isEqualTo("1h 0m 5s");
    }
}
