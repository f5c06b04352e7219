package dev.vigilo.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.vigilo.control.ControlDatabase;
import dev.vigilo.control.ControlSettings;
import dev.vigilo.control.TestPostgres;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/** {@code vigilo run create/status/watch} end to end, in-process, on real PostgreSQL and a local store. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RunCliTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    static Path home;

    private CliRunner cli;
    private String controlDb;
    private String uploadId;

    private static final String PROFILE = """
            name: quick
            agent:
              kind: command
              command: ["cat"]
            evaluators:
              - name: exact
                kind: exact_match
              - name: math_only
                kind: contains
                applies_to:
                  tags_any: [math]
            gates:
              - name: all
                required_evaluators: [exact]
                min_pass_rate: 0.8
              - name: math
                required_evaluators: [exact, math_only]
                min_pass_rate: 0.5
            limits:
              max_cases: 1000
            """;

    @BeforeAll
    void setUp() throws Exception {
        controlDb = TestPostgres.newDatabaseUrl();
        cli = new CliRunner(home, Map.of(), List.of("--control-db", controlDb));
        StringBuilder cases = new StringBuilder();
        for (int i = 0; i < 250; i++) {
            cases.append("{\"id\":\"c")
                    .append(i)
                    .append("\",\"input\":")
                    .append(i)
                    .append(",\"expected\":\"")
                    .append(i)
                    .append("\",\"tags\":[\"")
                    .append(i % 5 == 0 ? "math" : "text")
                    .append("\"]}\n");
        }
        Path file = home.resolve("cases.jsonl");
        Files.writeString(file, cases.toString());
        CliRunner.Result up = cli.run("dataset", "upload", file.toString());
        assertThat(up.exitCode()).as(up.err()).isZero();
        uploadId = up.out().trim();
    }

    @Test
    void prepareOnlyHoldsTheRunThenRepeatingRequestsExecution() throws Exception {
        Path profile = home.resolve("profile.yaml");
        Files.writeString(profile, PROFILE);
        String runId = UUID.randomUUID().toString();

        CliRunner.Result held = cli.run(
                "run",
                "create",
                "--profile-file",
                profile.toString(),
                "--dataset-upload-id",
                uploadId,
                "--run-id",
                runId,
                "--prepare-only",
                "--json");
        assertThat(held.exitCode()).as(held.err()).isZero();
        JsonNode h = JSON.readTree(held.out());
        assertThat(h.get("status").asText()).isEqualTo("creating");
        assertThat(h.get("dispatchable").asBoolean()).isFalse();
        assertThat(h.at("/creation_progress/plan_status").asText()).isEqualTo("ready");
        assertThat(h.get("expected_chunks").asLong()).isEqualTo(3);

        CliRunner.Result status = cli.run("run", "status", runId, "--json");
        assertThat(status.exitCode()).as(status.err()).isZero();
        JsonNode s = JSON.readTree(status.out());
        assertThat(s.at("/creation_progress/plan_chunk_cursor").asLong()).isEqualTo(3);
        assertThat(s.get("shards")).hasSize(3);
        long allCases = 0;
        long mathCases = 0;
        for (JsonNode shard : s.get("shards")) {
            assertThat(shard.has("shard")).isTrue();
            allCases += shard.at("/gates/all").asLong();
            mathCases += shard.at("/gates/math").asLong();
        }
        assertThat(allCases).isEqualTo(250);
        assertThat(mathCases).isEqualTo(50);
        assertThat(cli.run("run", "status", runId).out()).contains("plan: ready, 3 of 3 chunks");
        // Held by --prepare-only, the run ends its watch once the plan is ready.
        CliRunner.Result watch = cli.run("run", "watch", runId);
        assertThat(watch.exitCode()).as(watch.err()).isZero();
        assertThat(watch.out()).contains("\"plan_status\":\"ready\"");

        CliRunner.Result pending =
                cli.run("run", "create", "--profile", PROFILE, "--dataset-upload-id", uploadId, "--run-id", runId);
        assertThat(pending.exitCode()).as(pending.err()).isZero();
        assertThat(pending.out()).contains("run " + runId + " pending");
        assertThat(JSON.readTree(cli.run("run", "status", runId, "--json").out())
                        .at("/execution/chunks")
                        .asLong())
                .isEqualTo(3);
    }

    @Test
    void aHeldCreationLeaseSaysWhenItCanBeReclaimedInStatusAndInTheConflict() throws Exception {
        String runId = UUID.randomUUID().toString();
        CliRunner.Result held = cli.run(
                "run",
                "create",
                "--profile",
                PROFILE,
                "--dataset-upload-id",
                uploadId,
                "--run-id",
                runId,
                "--prepare-only");
        assertThat(held.exitCode()).as(held.err()).isZero();
        assertThat(cli.run("run", "status", runId).out()).doesNotContain("creation lease");
        // Another creator holds the lease, as one killed a moment ago leaves it.
        try (ControlDatabase control = ControlDatabase.open(new ControlSettings.Jdbc(controlDb))) {
            control.jdbi()
                    .useHandle(h -> h.execute(
                            "UPDATE runs SET creation_owner = gen_random_uuid(), creation_lease_expires_at ="
                                    + " clock_timestamp() + interval '252 seconds' WHERE run_id = ?::uuid",
                            runId));
        }
        Instant now = Instant.now();
        Pattern lease = Pattern.compile("reclaimable in 4m (\\d+)s, at (\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ)");

        CliRunner.Result text = cli.run("run", "status", runId);
        assertThat(text.exitCode()).as(text.err()).isZero();
        assertThat(text.out()).contains("creation lease: held by a creator, reclaimable in 4m ");
        Matcher shown = lease.matcher(text.out());
        assertThat(shown.find()).as(text.out()).isTrue();
        Instant expiresAt = Instant.parse(shown.group(2));
        assertThat(expiresAt).isBetween(now.plusSeconds(240), now.plusSeconds(254));

        JsonNode json = JSON.readTree(cli.run("run", "status", runId, "--json").out());
        assertThat(json.at("/creation_lease/expires_at").asText()).isEqualTo(shown.group(2));
        assertThat(json.at("/creation_lease/reclaimable_in_seconds").asLong()).isBetween(240L, 252L);
        assertThat(json.at("/creation_progress/plan_status").asText()).isEqualTo("ready");

        CliRunner.Result conflict =
                cli.run("run", "create", "--profile", PROFILE, "--dataset-upload-id", uploadId, "--run-id", runId);
        assertThat(conflict.exitCode()).as(conflict.err()).isEqualTo(ExitCode.CONFLICT);
        assertThat(conflict.err()).contains("run " + runId, "another creator holds the creation lease");
        Matcher said = lease.matcher(conflict.err());
        assertThat(said.find()).as(conflict.err()).isTrue();
        assertThat(Instant.parse(said.group(2))).isEqualTo(expiresAt);
        assertThat(conflict.err().strip()).doesNotContain("\n");
    }

    @Test
    void runCreateWarnsWhenTheSandboxProgramIsNotInstalledAndLocatesSandboxProblems() {
        CliRunner noPrograms = new CliRunner(home, Map.of("PATH", "/nonexistent"), List.of("--control-db", controlDb));
        String sandboxed = PROFILE + "sandbox: {kind: bwrap, pids: 64, keep_files: [\"*.patch\"]}\n";
        CliRunner.Result created = noPrograms.run(
                "run", "create", "--profile", sandboxed, "--dataset-upload-id", uploadId, "--prepare-only");
        assertThat(created.exitCode()).as(created.err()).isZero();
        assertThat(created.err())
                .contains("vigilo: warning: sandbox.kind bwrap needs bwrap on every worker's PATH, and it is not"
                        + " installed here")
                .contains("apt-get install bubblewrap");

        CliRunner.Result bad = noPrograms.run(
                "run",
                "create",
                "--profile",
                PROFILE + "sandbox: {kind: podman, pids: 1}\n",
                "--dataset-upload-id",
                uploadId,
                "--prepare-only");
        assertThat(bad.exitCode()).isNotZero();
        assertThat(bad.err()).contains("sandbox.image: is required").contains("sandbox.pids: must be an integer");
    }

    @Test
    void errorsNameTheRunAndThePathInTheProfile() {
        String runId = UUID.randomUUID().toString();
        CliRunner.Result bad = cli.run(
                "run",
                "create",
                "--profile",
                PROFILE.replace("[exact, math_only]", "[judge]"),
                "--dataset-upload-id",
                uploadId,
                "--run-id",
                runId);
        assertThat(bad.exitCode()).isEqualTo(ExitCode.INVALID_INPUT);
        assertThat(bad.err()).contains("run " + runId, "gates[1].required_evaluators[0]", "judge");

        CliRunner.Result both = cli.run(
                "run", "create", "--profile", PROFILE, "--profile-file", "x.yaml", "--dataset-upload-id", uploadId);
        assertThat(both.exitCode()).isEqualTo(ExitCode.USAGE);

        CliRunner.Result unknown = cli.run("run", "status", UUID.randomUUID().toString());
        assertThat(unknown.exitCode()).isEqualTo(ExitCode.INVALID_INPUT);
    }

    @Test
    void runCreateRefusesAnAgentUrlCarryingCredentialsInOneLineAndCreatesNothing() {
        String runId = UUID.randomUUID().toString();
        String profile = """
                name: leaky-url
                agent: {kind: http, url: "http://user:pw@127.0.0.1:9/v1/chat/completions?api_key=sk-live-123",
                        model: m, api_key_env: OPENAI_API_KEY}
                evaluators: [{name: exact, kind: exact_match}]
                gates: [{name: all, required_evaluators: [exact], min_pass_rate: 1}]
                """;
        CliRunner.Result r =
                cli.run("run", "create", "--profile", profile, "--dataset-upload-id", uploadId, "--run-id", runId);
        assertThat(r.exitCode()).as(r.out() + r.err()).isEqualTo(ExitCode.INVALID_INPUT);
        assertThat(r.err().strip())
                .isEqualTo(
                        "vigilo: error: run " + runId + ": --profile:2:26: agent.url: 'url' must not carry credentials;"
                                + " put the key in the variable api_key_env names");
        assertThat(r.out()).isEmpty();
        CliRunner.Result status = cli.run("run", "status", runId);
        assertThat(status.exitCode()).isEqualTo(ExitCode.INVALID_INPUT);
        assertThat(status.err()).contains("no such run");
    }
}
