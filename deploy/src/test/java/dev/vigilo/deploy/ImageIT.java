package dev.vigilo.deploy;

import static dev.vigilo.deploy.Containers.LIMITS;
import static dev.vigilo.deploy.Containers.check;
import static dev.vigilo.deploy.Containers.onPath;
import static dev.vigilo.deploy.Containers.run;
import static dev.vigilo.deploy.Containers.waitFor;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.vigilo.deploy.Containers.Result;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The image of deploy/Containerfile, built the documented way (deploy/build-image) from the repository's built
 * distribution on a base made here from the host's Debian packages (deploy/local-base-image.sh: no registry is
 * reachable from test machines), run in real podman containers: the quickstart settles in a container without a
 * network, and SIGTERM of a worker container holding a chunk ends it with exit 130 within its grace period, the chunk
 * given back (the worker's summary counts it, and a later worker settles the run).
 *
 * <p>Skipped without podman, runc's companions or the Debian JRE package, saying why; with {@code
 * VIGILO_REQUIRE_PODMAN=1} (CI) it fails instead.
 */
class ImageIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    /** deploy/k8s/worker.yaml's terminationGracePeriodSeconds and compose's stop_grace_period. */
    private static final int STOP_GRACE_SECONDS = 60;

    private static final String ID = UUID.randomUUID().toString().substring(0, 8);
    private static final String IMAGE = Containers.IMAGE;

    @TempDir
    static Path dir;

    private static final List<String> volumes = new ArrayList<>();
    private static final List<String> containers = new ArrayList<>();

    @BeforeAll
    static void buildImage() throws Exception {
        require("podman");
        require("busybox");
        require("dpkg");
        Containers.configure(dir);
        Result jre = run(List.of("dpkg", "-s", "openjdk-17-jre-headless"), Duration.ofMinutes(1));
        need(jre.code() == 0, "openjdk-17-jre-headless is not installed (the local base image is made from it)");
        Containers.buildImages();
    }

    @AfterAll
    static void removeAll() throws Exception {
        if (!onPath("podman")) {
            return;
        }
        for (String c : containers) {
            run(List.of("podman", "rm", "-f", c), Duration.ofMinutes(2));
        }
        for (String v : volumes) {
            run(List.of("podman", "volume", "rm", "-f", v), Duration.ofMinutes(2));
        }
    }

    @Test
    void theQuickstartSettlesInAContainerWithoutANetworkAsANonRootUser() throws Exception {
        Result user = check(run(
                List.of("podman", "image", "inspect", "--format", "{{.Config.User}}", IMAGE), Duration.ofMinutes(1)));
        assertThat(user.out().strip()).isEqualTo("10001:10001");
        String home = volume();
        Result quickstart = check(run(
                podmanRun(List.of("--rm", "--network", "none", "-v", home + ":/var/lib/vigilo"), "quickstart"),
                Duration.ofMinutes(10)));
        assertThat(quickstart.out())
                .contains("embedded PostgreSQL")
                .containsPattern("Run [0-9a-f-]{36}: settled, verdict (passed|failed|inconclusive)")
                .contains("overall");
    }

    @Test
    void sigtermGivesAWorkersChunkBackAndItExitsWithinItsGracePeriod() throws Exception {
        Path data = Files.createDirectories(dir.resolve("data"));
        Files.setPosixFilePermissions(data, PosixFilePermissions.fromString("rwxr-xr-x"));
        Files.writeString(
                data.resolve("cases.jsonl"),
                "{\"id\":\"a\",\"input\":\"x\",\"expected\":\"42\"}\n{\"id\":\"b\",\"input\":\"y\",\"expected\":\"42\"}\n");
        // The agent marks that it started, then holds its chunk until the file `go` exists.
        Files.writeString(data.resolve("profile.yaml"), """
                name: hold
                agent:
                  kind: command
                  command: [sh, -c, "cat > /dev/null; touch /var/lib/vigilo/started; \
                while [ ! -f /var/lib/vigilo/go ]; do sleep 1; done; echo 42"]
                  timeout_seconds: 600
                evaluators:
                  - name: exact
                    kind: exact_match
                gates:
                  - name: overall
                    required_evaluators: [exact]
                    min_pass_rate: 1.0
                """);
        for (Path f : List.of(data.resolve("cases.jsonl"), data.resolve("profile.yaml"))) {
            Files.setPosixFilePermissions(f, PosixFilePermissions.fromString("rw-r--r--"));
        }
        String home = volume();
        String worker = "vigilo-it-worker-" + ID;
        containers.add(worker);
        check(run(
                podmanRun(
                        List.of(
                                "-d",
                                "--name",
                                worker,
                                "--network",
                                "none",
                                "-v",
                                home + ":/var/lib/vigilo",
                                "-v",
                                data + ":/data:ro"),
                        "worker",
                        "--concurrency",
                        "2",
                        "--json"),
                Duration.ofMinutes(2)));
        // The worker's own container holds the embedded PostgreSQL: the other commands run beside it (podman exec),
        // once the worker's server host runs (it writes server.properties then). Started together with the worker on
        // a loaded machine, an upload once met the server "shutting down" (ImageIT, 2026-12-03; not understood yet):
        // this test is about signals, so it lets the worker start the server first.
        waitFor(
                () -> run(
                                        List.of(
                                                "podman",
                                                "exec",
                                                worker,
                                                "test",
                                                "-f",
                                                "/var/lib/vigilo/postgres/server.properties"),
                                        Duration.ofMinutes(1))
                                .code()
                        == 0,
                Duration.ofMinutes(5),
                "the embedded PostgreSQL server of " + worker);
        JsonNode upload = JSON.readTree(check(exec(worker, "dataset", "upload", "/data/cases.jsonl", "--json"))
                .out());
        JsonNode created = JSON.readTree(check(exec(
                        worker,
                        "run",
                        "create",
                        "--profile-file",
                        "/data/profile.yaml",
                        "--dataset-upload-id",
                        upload.get("upload_id").asText(),
                        "--json"))
                .out());
        String runId = created.get("run_id").asText();
        waitFor(
                () -> run(
                                        List.of("podman", "exec", worker, "test", "-f", "/var/lib/vigilo/started"),
                                        Duration.ofMinutes(1))
                                .code()
                        == 0,
                Duration.ofMinutes(5),
                "the agent to start in " + worker);

        // podman stop sends SIGTERM, waits up to the grace period, then SIGKILL (exit 137).
        check(run(
                List.of("podman", "stop", "--time", Integer.toString(STOP_GRACE_SECONDS), worker),
                Duration.ofSeconds(STOP_GRACE_SECONDS + 60)));
        Result exit = check(
                run(List.of("podman", "inspect", "--format", "{{.State.ExitCode}}", worker), Duration.ofMinutes(1)));
        assertThat(exit.out().strip()).as("exit code of the signalled worker").isEqualTo("130");
        Result logs = check(run(List.of("podman", "logs", worker), Duration.ofMinutes(1)));
        JsonNode summary = JSON.readTree(logs.out()
                .lines()
                .filter(l -> l.startsWith("{"))
                .reduce((a, b) -> b)
                .orElseThrow(() -> new AssertionError("no summary in the worker's output: " + logs.out())));
        assertThat(summary.get("stopped").asText()).isEqualTo("signal");
        assertThat(summary.get("chunks_requeued").asLong()).isPositive();
        assertThat(summary.get("chunks_completed").asLong()).isZero();

        // The chunk is queued again: a new worker (a new container on the same Vigilo home) settles the run.
        check(run(
                podmanRun(
                        List.of("--rm", "--network", "none", "-v", home + ":/var/lib/vigilo", "--entrypoint", "touch"),
                        "/var/lib/vigilo/go"),
                Duration.ofMinutes(1)));
        check(run(
                podmanRun(
                        List.of("--rm", "--network", "none", "-v", home + ":/var/lib/vigilo"),
                        "worker",
                        "--exit-when-idle"),
                Duration.ofMinutes(10)));
        JsonNode status = JSON.readTree(check(run(
                        podmanRun(
                                List.of("--rm", "--network", "none", "-v", home + ":/var/lib/vigilo"),
                                "run",
                                "status",
                                runId,
                                "--json"),
                        Duration.ofMinutes(5)))
                .out());
        assertThat(status.get("status").asText()).isEqualTo("settled");
        assertThat(status.at("/execution/cases_done").asLong()).isEqualTo(2);
        assertThat(status.get("verdict").asText()).isEqualTo("passed");
    }

    private static List<String> podmanRun(List<String> options, String... command) {
        List<String> argv = new ArrayList<>(List.of("podman", "run"));
        argv.addAll(LIMITS);
        argv.addAll(options);
        argv.add(IMAGE);
        argv.addAll(List.of(command));
        return argv;
    }

    private static Result exec(String container, String... command) throws Exception {
        List<String> argv = new ArrayList<>(List.of("podman", "exec", container, "/opt/vigilo/bin/vigilo"));
        argv.addAll(List.of(command));
        return run(argv, Duration.ofMinutes(5));
    }

    private static String volume() throws Exception {
        String name = "vigilo-it-" + ID + "-" + volumes.size();
        volumes.add(name);
        check(run(List.of("podman", "volume", "create", name), Duration.ofMinutes(1)));
        return name;
    }

    private static void require(String program) {
        need(onPath(program), program + " is not on the PATH");
    }

    private static void need(boolean present, String why) {
        if (!present && "1".equals(System.getenv("VIGILO_REQUIRE_PODMAN"))) {
            fail(why + " and VIGILO_REQUIRE_PODMAN=1: install it (apt-get install podman runc busybox-static"
                    + " openjdk-17-jre-headless)");
        }
        assumeTrue(
                present,
                why + ": the image tests are skipped (apt-get install podman runc busybox-static"
                        + " openjdk-17-jre-headless; set VIGILO_REQUIRE_PODMAN=1 to fail instead)");
    }
}
