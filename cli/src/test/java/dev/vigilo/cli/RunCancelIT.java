package dev.vigilo.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.vigilo.control.TestPostgres;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Ctrl-C (here SIGTERM, which runs the same shutdown path) of a real {@code vigilo run create} process yields the
 * creation lease: the same command can resume at once instead of waiting five minutes for the lease to expire.
 */
class RunCancelIT {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path home;

    @Test
    void terminatingCreateYieldsTheLeaseSoARepeatResumesAtOnce() throws Exception {
        String db = TestPostgres.newDatabaseUrl();
        Path cases = home.resolve("cases.jsonl");
        CaseFiles.write(cases, 60L << 20, 200);
        VigiloProcess.Result up = VigiloProcess.run(
                home, Map.of(), List.of(), 300, "--control-db", db, "dataset", "upload", cases.toString());
        assertThat(up.exitCode()).as(up.err()).isZero();
        String uploadId = up.out().trim();
        Path profile = home.resolve("profile.yaml");
        Files.writeString(profile, """
                name: cancel
                agent: {kind: command, command: ["cat"]}
                evaluators: [{name: exact, kind: exact_match}]
                gates: [{name: all, required_evaluators: [exact], min_pass_rate: 0.5}]
                limits: {max_cases: 10000000}
                """);
        String runId = UUID.randomUUID().toString();
        String[] create = {
            "--control-db",
            db,
            "run",
            "create",
            "--profile-file",
            profile.toString(),
            "--dataset-upload-id",
            uploadId,
            "--run-id",
            runId,
            "--json"
        };

        Process p = VigiloProcess.builder(home, Map.of(), List.of(), create)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .redirectError(ProcessBuilder.Redirect.DISCARD)
                .start();
        // Wait until preparation has acknowledged some chunks, then terminate it politely. The cursor is read from
        // the control database directly: a `run status` process per poll takes a second or more to start, long
        // enough for a fast preparation to finish between two polls.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        long cursor = 0;
        try (Connection c = DriverManager.getConnection(db);
                PreparedStatement q =
                        c.prepareStatement("SELECT plan_chunk_cursor FROM run_plans WHERE run_id::text = ?")) {
            q.setString(1, runId);
            while (System.nanoTime() < deadline && p.isAlive()) {
                try (ResultSet rs = q.executeQuery()) {
                    cursor = rs.next() ? rs.getLong(1) : 0;
                }
                if (cursor > 0) {
                    break;
                }
                Thread.sleep(10);
            }
        }
        assertThat(p.isAlive()).as("preparation still running when interrupted").isTrue();
        assertThat(cursor).isPositive();
        p.destroy(); // SIGTERM: shutdown hooks run, as on Ctrl-C
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();

        // The lease was yielded: a repeat is not rejected as a competing caller and completes the plan.
        VigiloProcess.Result again = VigiloProcess.run(home, Map.of(), List.of(), 300, create);
        assertThat(again.exitCode()).as(again.err()).isZero();
        JsonNode result = JSON.readTree(again.out());
        assertThat(result.get("status").asText()).isEqualTo("pending");
        assertThat(result.at("/creation_progress/plan_status").asText()).isEqualTo("ready");
    }
}
