package dev.vigilo.plan;

import static dev.vigilo.plan.PricingAndLimitsProfileTest.canonical;
import static dev.vigilo.plan.PricingAndLimitsProfileTest.parse;
import static dev.vigilo.plan.PricingAndLimitsProfileTest.problems;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** {@code sandbox} in a profile: validated with one located line per problem, written canonically only when given. */
class SandboxProfileTest {
    @Test
    void aSandboxIsReadAndWrittenCanonically() {
        String yaml = "sandbox:\n  kind: bwrap\n  workdir: tasks/repo\n  memory_mb: 2048\n  pids: 256\n"
                + "  keep_files: [\"*.patch\", \"out/**\"]\n";
        Profile.Sandbox s = parse(yaml).sandbox();
        assertThat(s.kind()).isEqualTo(Profile.SandboxKind.BWRAP);
        assertThat(s.network()).isFalse();
        assertThat(s.workdir()).contains("tasks/repo");
        assertThat(s.memoryMb()).contains(2048L);
        assertThat(s.pids()).contains(256);
        assertThat(s.keepFiles()).containsExactly("*.patch", "out/**");
        assertThat(canonical(yaml))
                .endsWith("\"sandbox\":{\"kind\":\"bwrap\",\"network\":false,\"workdir\":\"tasks/repo\","
                        + "\"memory_mb\":2048,\"pids\":256,\"keep_files\":[\"*.patch\",\"out/**\"]}}");
        assertThat(parse("sandbox: {kind: podman, image: localhost/agent:1, network: true}\n")
                        .sandbox()
                        .image())
                .isEqualTo(Optional.of("localhost/agent:1"));
    }

    @Test
    void theExampleSandboxProfileIsValid() throws Exception {
        java.nio.file.Path root = java.nio.file.Path.of("").toAbsolutePath();
        while (!java.nio.file.Files.exists(root.resolve("examples/sandbox-profile.yaml"))) {
            root = root.getParent();
            assertThat(root)
                    .as("examples/sandbox-profile.yaml above the working directory")
                    .isNotNull();
        }
        Profile.Sandbox s = ProfileInput.file(root.resolve("examples/sandbox-profile.yaml"))
                .parse()
                .sandbox();
        assertThat(s.kind()).isEqualTo(Profile.SandboxKind.BWRAP);
        assertThat(s.workdir()).contains("examples/agent");
        assertThat(s.network()).isFalse();
    }

    @Test
    void noSandboxOrKindNoneKeepsTheProfilesIdentity() {
        String plain = canonical("");
        assertThat(plain).doesNotContain("sandbox");
        assertThat(canonical("sandbox: {kind: none}\n")).isEqualTo(plain);
        assertThat(parse("").sandbox()).isEqualTo(Profile.Sandbox.NONE);
    }

    @Test
    void everyProblemIsOneLocatedLine() {
        List<String> p = problems("sandbox:\n  kind: docker\n");
        assertThat(p)
                .singleElement()
                .asString()
                .startsWith("p.yaml:")
                .contains("sandbox.kind:")
                .contains("bwrap");
        assertThat(problems("sandbox: {kind: podman}\n"))
                .singleElement()
                .asString()
                .contains("sandbox.image: is required");
        assertThat(problems("sandbox: {kind: bwrap, image: x}\n"))
                .singleElement()
                .asString()
                .contains("sandbox.image: is for podman sandboxes");
        assertThat(problems("sandbox: {kind: bwrap, memory_mb: 1, pids: 0}\n"))
                .hasSize(2)
                .anySatisfy(l -> assertThat(l).contains("sandbox.memory_mb: must be an integer in [16,"))
                .anySatisfy(l -> assertThat(l).contains("sandbox.pids: must be an integer in [4,"));
        assertThat(problems("sandbox: {kind: bwrap, keep_files: [\"/etc/*\", \"../x\", \"a[\"]}\n"))
                .hasSize(3)
                .anySatisfy(l -> assertThat(l).contains("sandbox.keep_files[0]: must be relative"))
                .anySatisfy(l -> assertThat(l).contains("sandbox.keep_files[1]: must not leave"))
                .anySatisfy(l -> assertThat(l).contains("sandbox.keep_files[2]: is not a valid glob"));
        assertThat(problems("sandbox: {network: true}\n"))
                .singleElement()
                .asString()
                .contains("sandbox.network: has no effect without a sandbox");
        assertThat(problems("sandbox: {kind: bwrap, cpus: 2}\n"))
                .singleElement()
                .asString()
                .contains("sandbox.cpus: unknown key");
        assertThat(problems("sandbox: [bwrap]\n")).singleElement().asString().contains("sandbox: must be a mapping");
    }
}
