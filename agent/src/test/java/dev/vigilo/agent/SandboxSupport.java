package dev.vigilo.agent;

import static org.assertj.core.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.vigilo.agent.sandbox.Sandboxes;

/** Whether sandbox tests can run here: skipped without the program (saying why), failed when it is required. */
public final class SandboxSupport {
    private SandboxSupport() {}

    /** Skips (or fails with {@code VIGILO_REQUIRE_SANDBOX=1}) when {@code bwrap} is not on the PATH. */
    public static void requireBwrap() {
        require("bwrap", "VIGILO_REQUIRE_SANDBOX", "bubblewrap");
    }

    /** Skips (or fails with {@code VIGILO_REQUIRE_PODMAN=1}) when {@code podman} is not on the PATH. */
    public static void requirePodman() {
        require("podman", "VIGILO_REQUIRE_PODMAN", "podman");
    }

    private static void require(String program, String variable, String debianPackage) {
        boolean present = Sandboxes.find(program, System.getenv()).isPresent();
        if (!present && "1".equals(System.getenv(variable))) {
            fail(program + " is not on the PATH and " + variable + "=1: install it (apt-get install " + debianPackage
                    + ")");
        }
        assumeTrue(
                present,
                program + " is not on the PATH: sandbox tests skipped (apt-get install " + debianPackage + "; set "
                        + variable + "=1 to fail instead)");
    }
}
