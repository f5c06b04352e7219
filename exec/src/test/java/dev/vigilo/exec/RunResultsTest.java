package dev.vigilo.exec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.vigilo.common.errors.DamagedException;
import dev.vigilo.exec.admission.Admission;
import dev.vigilo.exec.record.Receipt;
import dev.vigilo.exec.view.RunResults;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RunResultsTest {
    private static final ObjectMapper MAPPER = new ObjectMapper();

    @TempDir
    Path dir;

    ExecFixture fx;
    Placements placements;
    UUID run;

    @BeforeEach
    void setUp() throws IOException {
        fx = new ExecFixture(dir, 2_000);
        placements = Placements.open(fx.control, ExecutionConfig.defaults());
        run = fx.prepare();
        new Admission(placements, fx.storage).admit(run);
        new SimulatedWorker(placements, fx.store, run).run(5);
    }

    @AfterEach
    void tearDown() {
        placements.close();
        fx.close();
    }

    private String receiptKey(long chunk) {
        return placements
                .jdbi(ExecutionConfig.CONTROL)
                .withHandle(
                        h -> h.createQuery("SELECT receipt_key FROM exec_chunks WHERE run_id = :r AND chunk_index = :c")
                                .bind("r", run)
                                .bind("c", chunk)
                                .mapTo(String.class)
                                .one());
    }

    private String results() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        new RunResults(placements, fx.storage).write(run, out);
        return out.toString(StandardCharsets.UTF_8);
    }

    @Test
    void oneLinePerExecutedCaseWithTheReceiptsResults() throws IOException {
        List<String> lines = results().lines().toList();
        assertThat(lines).hasSize(500);
        JsonNode first = MAPPER.readTree(lines.get(0));
        assertThat(first.path("case_id").asText()).isEqualTo("case-0");
        assertThat(first.path("ordinal").asLong()).isZero();
        assertThat(first.path("shard").asInt()).isZero();
        assertThat(first.path("chunk").asLong()).isZero();
        List<String> keys = new java.util.ArrayList<>();
        first.fieldNames().forEachRemaining(keys::add);
        assertThat(keys)
                .containsExactly(
                        "case_id",
                        "ordinal",
                        "shard",
                        "chunk",
                        "status",
                        "attempts",
                        "output",
                        "evaluators",
                        "gates",
                        "error",
                        "usage");
        // Compare every line with its receipt, read here as plain JSON.
        int i = 0;
        for (long chunk = 0; chunk < 5; chunk++) {
            JsonNode receipt = MAPPER.readTree(Files.readAllBytes(fx.storeRoot.resolve(receiptKey(chunk))));
            for (JsonNode c : receipt.path("cases")) {
                JsonNode line = MAPPER.readTree(lines.get(i++));
                assertThat(line.path("case_id").asText()).isEqualTo(c.path("id").asText());
                assertThat(line.path("status").asText())
                        .isEqualTo(c.path("status").asText());
                assertThat(line.path("attempts")).isEqualTo(c.path("attempts"));
                assertThat(line.path("error")).isEqualTo(c.path("error"));
                assertThat(line.path("gates")).isEqualTo(c.path("gates"));
                assertThat(line.path("evaluators").size())
                        .isEqualTo(c.path("evaluators").size());
                for (JsonNode e : c.path("evaluators")) {
                    JsonNode l = line.path("evaluators").path(e.path("name").asText());
                    assertThat(l.path("passed")).isEqualTo(e.path("passed"));
                    assertThat(l.path("score").asDouble())
                            .isEqualTo(e.path("score").asDouble());
                    assertThat(l.path("error")).isEqualTo(e.path("error"));
                    assertThat(l.path("reason")).isEqualTo(e.path("reason"));
                }
                assertThat(line.path("usage").path("cost_usd"))
                        .isEqualTo(c.path("usage").path("cost_usd"));
                if (c.path("output").isTextual()) {
                    assertThat(line.path("output")).isEqualTo(c.path("output"));
                } else if (c.path("output_ref").isObject()) {
                    assertThat(line.path("output").asText())
                            .hasSize(c.path("output_length").asInt());
                } else {
                    assertThat(line.path("output").isNull()).isTrue();
                }
            }
        }
        assertThat(MAPPER.readTree(lines.get(42)).path("output").asText()).hasSize(Receipt.INLINE_OUTPUT_BYTES + 10);
    }

    @Test
    void anAlteredOrMissingReceiptIsDamageNamingItsKey() throws IOException {
        String key = receiptKey(3);
        Path file = fx.storeRoot.resolve(key);
        byte[] bytes = Files.readAllBytes(file);
        bytes[bytes.length / 2] ^= 1;
        file.toFile().setWritable(true);
        Files.write(file, bytes);
        assertThatThrownBy(this::results)
                .isInstanceOf(DamagedException.class)
                .hasMessageContaining(key)
                .hasMessageContaining("altered");
        Files.delete(file);
        assertThatThrownBy(this::results)
                .isInstanceOf(DamagedException.class)
                .hasMessageContaining(key)
                .hasMessageContaining("missing");
    }

    @Test
    void aRowWhoseTalliesDifferFromItsReceiptIsDamage() {
        placements
                .jdbi(ExecutionConfig.CONTROL)
                .useHandle(h -> h.execute(
                        "UPDATE exec_chunks SET cases_errored = cases_errored + 1 WHERE run_id = ?"
                                + " AND chunk_index = 2",
                        run));
        assertThatThrownBy(this::results)
                .isInstanceOf(DamagedException.class)
                .hasMessageContaining(receiptKey(2))
                .hasMessageContaining("tallies differ");
    }

    @Test
    void anAlteredLongOutputIsDamage() throws IOException {
        Path outputs = fx.storeRoot.resolve("runs/" + run + "/outputs");
        Path file;
        try (var s = Files.list(outputs)) {
            file = s.findFirst().orElseThrow();
        }
        file.toFile().setWritable(true);
        Files.writeString(file, "y".repeat(Receipt.INLINE_OUTPUT_BYTES + 10));
        assertThatThrownBy(this::results)
                .isInstanceOf(DamagedException.class)
                .hasMessageContaining("outputs/")
                .hasMessageContaining("case-42");
    }
}
