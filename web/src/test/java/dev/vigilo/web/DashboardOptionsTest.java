package dev.vigilo.web;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vigilo.common.errors.InvalidInputException;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class DashboardOptionsTest {
    private static DashboardOptions bind(String address) {
        return new DashboardOptions(address, 0, Optional.empty());
    }

    @Test
    void ipLiteralsAreAcceptedAndJudgedLoopbackOrNot() {
        assertThat(bind("127.0.0.1").loopback()).isTrue();
        assertThat(bind("::1").loopback()).isTrue();
        assertThat(bind("0.0.0.0").loopback()).isFalse();
        assertThat(bind("192.168.1.20").loopback()).isFalse();
        assertThat(bind("::").loopback()).isFalse();
    }

    @Test
    void hostNamesAreRefusedWhenTheOptionsAreMade() {
        // docs/web.md: IP literals only, so no DNS lookup decides what is exposed (and "localhost" is a name).
        for (String name : new String[] {"localhost", "LOCALHOST", "example.com", "not an address!", "1.2.3", ""}) {
            assertThatThrownBy(() -> bind(name))
                    .as(name)
                    .isInstanceOf(InvalidInputException.class)
                    .hasMessageStartingWith("--bind ")
                    .hasMessageContaining("is not an IP address")
                    .hasMessageContaining("127.0.0.1");
        }
        for (String bad : new String[] {"1:2:3", "::1::2", "12345::"}) {
            assertThatThrownBy(() -> bind(bad))
                    .as(bad)
                    .isInstanceOf(InvalidInputException.class)
                    .hasMessageContaining("is not a valid IP address");
        }
    }
}
