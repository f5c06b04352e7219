package dev.vigilo.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.vigilo.sessionlog.Compression;
import dev.vigilo.sessionlog.LockFileEpochSource;
import dev.vigilo.sessionlog.SessionHeader;
import dev.vigilo.sessionlog.SessionLogWriter;
import dev.vigilo.sessionlog.WriterOptions;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code vigilo session verify/cat/repair/compact} on logs written by Vigilo's own writer. */
class SessionCliTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    private CliRunner cli() {
        return new CliRunner(dir, Map.of(), List.of());
    }

    private Path writeLog(String name, int batches) throws Exception {
        return writeLog(name, batches, Compression.ZSTD);
    }

    private Path writeLog(String name, int batches, Compression compression) throws Exception {
        Path log = dir.resolve(name).resolve("session" + compression.suffix());
        Files.createDirectories(log.getParent());
        SessionHeader header = new SessionHeader("session-cli-test", "/tmp", 1760000000000L, 0);
        try (SessionLogWriter w = SessionLogWriter.create(
                log, header, new LockFileEpochSource(), WriterOptions.defaults().withCompression(compression))) {
            for (int b = 0; b < batches; b++) {
                List<ObjectNode> batch = new ArrayList<>();
                for (int i = 0; i < 3; i++) {
                    ObjectNode n = JSON.createObjectNode();
                    n.put("type", "todo/write")
                            .put("time", 1000 + b * 3 + i)
                            .putObject("data")
                            .putArray("todos")
                            .add("t" + (b * 3 + i));
                    batch.add(n);
                }
                w.append(batch);
            }
        }
        return log;
    }

    @Test
    void verifyAcceptsAWrittenLogAndRejectsADamagedOne() throws Exception {
        Path log = writeLog("ok", 5);
        CliRunner.Result ok = cli().run("session", "verify", log.toString(), "--json");
        assertThat(ok.exitCode()).as(ok.err()).isZero();
        JsonNode report = JSON.readTree(ok.out());
        assertThat(report.get("verdict").asText()).isEqualTo("ACCEPT");
        assertThat(report.get("channel").asText()).isIn("p1", "p2");
        for (String key : List.of(
                "events", "stored", "closers", "hw_seq", "hw_offset", "fenced", "truncated", "error", "error_offset")) {
            assertThat(report.has(key)).as(key).isTrue();
        }
        assertThat(report.get("error").isNull()).isTrue();

        byte[] bytes = Files.readAllBytes(log);
        bytes[bytes.length / 3] ^= 0x40; // damage a committed frame
        Files.write(log, bytes);
        CliRunner.Result bad = cli().run("session", "verify", log.toString(), "--json");
        assertThat(bad.exitCode()).isEqualTo(ExitCode.FAILED);
        assertThat(JSON.readTree(bad.out()).get("verdict").asText()).isEqualTo("REJECT");

        assertThat(cli().run("session", "verify", dir.resolve("missing.zstd").toString())
                        .exitCode())
                .isEqualTo(ExitCode.INVALID_INPUT);
        assertThat(cli().run("session", "verify").exitCode()).isEqualTo(ExitCode.USAGE);
    }

    @Test
    void catStreamsCommittedEventsFromASeq() throws Exception {
        Path log = writeLog("cat", 4);
        CliRunner.Result all = cli().run("session", "cat", log.toString());
        assertThat(all.exitCode()).as(all.err()).isZero();
        List<JsonNode> events = new ArrayList<>();
        for (String line : all.out().split("\n")) {
            events.add(JSON.readTree(line));
        }
        assertThat(events).extracting(e -> e.get("type").asText()).containsOnly("todo/write");
        assertThat(events).hasSize(12);
        long third = events.get(2).get("seq").asLong();
        CliRunner.Result tail = cli().run("session", "cat", log.toString(), "--from-seq", Long.toString(third));
        assertThat(tail.out().split("\n")).hasSize(10);
    }

    @Test
    void repairAndCompactWriteLogsThatVerify() throws Exception {
        Path log = writeLog("ops", 20);
        CliRunner.Result repaired = cli().run("session", "repair", log.toString());
        assertThat(repaired.exitCode()).as(repaired.err()).isZero();
        Path out = log.resolveSibling("session.jsonl.zstd.repaired");
        assertThat(out).exists();
        assertThat(cli().run("session", "verify", out.toString()).exitCode()).isZero();
        assertThat(cli().run("session", "repair", log.toString()).exitCode())
                .as("an existing output is kept without --force")
                .isEqualTo(ExitCode.INVALID_INPUT);
        CliRunner.Result forced = cli().run("session", "repair", log.toString(), "--force");
        assertThat(forced.exitCode()).as(forced.err()).isZero();
        assertThat(cli().run("session", "verify", out.toString()).exitCode()).isZero();
        CliRunner.Result intoMissing = cli().run(
                        "session",
                        "repair",
                        log.toString(),
                        "--out",
                        dir.resolve("none/x.zstd").toString());
        assertThat(intoMissing.exitCode()).isEqualTo(ExitCode.INVALID_INPUT);
        assertThat(intoMissing.err())
                .contains("does not exist; create it first")
                .hasLineCount(1);
        CliRunner.Result ontoDir = cli().run("session", "compact", log.toString(), "--out", dir.toString());
        assertThat(ontoDir.exitCode()).isEqualTo(ExitCode.INVALID_INPUT);
        assertThat(ontoDir.err()).contains("is a directory").hasLineCount(1);

        Path compacted = dir.resolve("compacted.zstd");
        CliRunner.Result compact = cli().run("session", "compact", log.toString(), "--out", compacted.toString());
        assertThat(compact.exitCode()).as(compact.err()).isZero();
        assertThat(compact.out()).contains("frames");
        JsonNode before = JSON.readTree(
                cli().run("session", "verify", log.toString(), "--json").out());
        JsonNode after = JSON.readTree(
                cli().run("session", "verify", compacted.toString(), "--json").out());
        assertThat(after.get("verdict").asText()).isEqualTo("ACCEPT");
        assertThat(after.get("frames").asLong()).isLessThan(before.get("frames").asLong());
        assertThat(cli().run("session", "cat", compacted.toString()).out())
                .isEqualTo(cli().run("session", "cat", log.toString()).out());
    }

    @Test
    void uncompressedLogsVerifyCatAndConvertAndAMisnamedLogIsAClearReject() throws Exception {
        Path log = writeLog("plain", 4, Compression.NONE);
        CliRunner.Result ok = cli().run("session", "verify", log.toString(), "--json");
        assertThat(ok.exitCode()).as(ok.err()).isZero();
        JsonNode report = JSON.readTree(ok.out());
        assertThat(report.get("compression").asText()).isEqualTo("none");
        assertThat(report.get("channel").asText()).isIn("p1", "p2");
        assertThat(cli().run("session", "cat", log.toString()).out().split("\n"))
                .hasSize(12);

        Path zstd = dir.resolve("converted.jsonl.zstd");
        CliRunner.Result compact = cli().run("session", "compact", log.toString(), "--out", zstd.toString());
        assertThat(compact.exitCode()).as(compact.err()).isZero();
        JsonNode converted = JSON.readTree(
                cli().run("session", "verify", zstd.toString(), "--json").out());
        assertThat(converted.get("compression").asText()).isEqualTo("zstd");
        assertThat(cli().run("session", "cat", zstd.toString()).out())
                .isEqualTo(cli().run("session", "cat", log.toString()).out());

        Path misnamed = dir.resolve("misnamed.jsonl.zstd");
        Files.copy(log, misnamed);
        CliRunner.Result bad = cli().run("session", "verify", misnamed.toString());
        assertThat(bad.exitCode()).isEqualTo(ExitCode.FAILED);
        assertThat(bad.out()).contains("holds uncompressed JSONL").contains("rename it to session.jsonl");
        assertThat(bad.out()).doesNotContain("invalid frame magic");
    }
}
