package dev.vigilo.datagen;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The token bucket on a controlled clock: exact waits. */
class RateLimiterTest {
    final AtomicLong now = new AtomicLong(1_000_000_000L);

    @Test
    void aBurstOfOneSecondThenTheRate() {
        RateLimiter l = new RateLimiter(120, now::get); // 2/s, at most 2 at once
        assertThat(l.reserve(1)).isZero();
        assertThat(l.reserve(1)).isZero();
        assertThat(l.reserve(1)).isEqualTo(500_000_000L);
        assertThat(l.reserve(1)).isEqualTo(1_000_000_000L);
        now.addAndGet(10_000_000_000L); // idle time refills up to one second's worth only
        assertThat(l.reserve(2)).isZero();
        assertThat(l.reserve(1)).isEqualTo(500_000_000L);
    }

    @Test
    void corrections_andPauses() {
        RateLimiter l = new RateLimiter(60, now::get); // 1/s
        assertThat(l.reserve(1)).isZero();
        l.adjust(-1); // the estimate was too high: given back
        assertThat(l.reserve(1)).isZero();
        l.adjust(2); // two more were used than reserved
        assertThat(l.reserve(1)).isEqualTo(3_000_000_000L);
        RateLimiter p = new RateLimiter(60, now::get);
        p.pauseUntil(now.get() + 5_000_000_000L);
        assertThat(p.reserve(1)).isEqualTo(5_000_000_000L);
        assertThat(p.reserve(1)).isEqualTo(6_000_000_000L);
    }
}
