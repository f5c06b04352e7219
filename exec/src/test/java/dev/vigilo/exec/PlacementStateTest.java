package dev.vigilo.exec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vigilo.common.errors.InvalidInputException;
import java.io.IOException;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Listing registered placements and setting their state from the control database alone. */
class PlacementStateTest {
    @TempDir
    Path dir;

    ExecFixture fx;

    @BeforeEach
    void setUp() throws IOException {
        fx = new ExecFixture(dir, 3);
    }

    @AfterEach
    void tearDown() {
        fx.close();
    }

    @Test
    void registeredPlacementsAreListedAndDrainedWithoutOpeningThem() {
        assertThat(Placements.registered(fx.control)).isEmpty();
        assertThatThrownBy(() -> Placements.setState(fx.control, "control", Placements.State.DRAINING))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("none is yet");
        try (Placements placements = Placements.open(fx.control, ExecutionConfig.defaults())) {
            assertThat(Placements.registered(fx.control))
                    .containsExactly(new Placements.Registered("control", Placements.State.ACTIVE));
            Placements.setState(fx.control, "control", Placements.State.DRAINING);
            assertThat(placements.state("control")).isEqualTo(Placements.State.DRAINING);
            assertThat(Placements.registered(fx.control))
                    .containsExactly(new Placements.Registered("control", Placements.State.DRAINING));
            placements.setState("control", Placements.State.ACTIVE);
            assertThat(Placements.registered(fx.control))
                    .containsExactly(new Placements.Registered("control", Placements.State.ACTIVE));
        }
        assertThatThrownBy(() -> Placements.setState(fx.control, "eu-1", Placements.State.DRAINING))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("\"eu-1\"")
                .hasMessageContaining("registered: control");
    }
}
