package dev.vigilo.exec.record;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vigilo.common.errors.DamagedException;
import dev.vigilo.storage.Sha256;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** A persisted receipt is read strictly: a key given twice is damage, not "the last one wins". */
class ReceiptStrictnessTest {
    private static Receipt receipt() {
        Sha256 sha = Sha256.of("case".getBytes(StandardCharsets.UTF_8));
        Receipt.CaseResult c = new Receipt.CaseResult(
                0,
                "c-1",
                sha,
                false,
                Optional.of("out"),
                Optional.empty(),
                3,
                Optional.of(Sha256.of("out".getBytes(StandardCharsets.UTF_8))),
                1,
                5,
                Optional.empty(),
                List.of(new Receipt.EvaluatorResult("e", true, 1.0, Optional.empty(), 1)),
                Map.of("g", Receipt.GateOutcome.PASSED));
        return new Receipt(
                UUID.randomUUID(),
                7,
                UUID.randomUUID(),
                3,
                2,
                UUID.randomUUID(),
                sha,
                Instant.parse("2026-01-01T00:00:00Z"),
                Instant.parse("2026-01-01T00:00:01Z"),
                List.of("e"),
                List.of("g"),
                List.of(c));
    }

    @Test
    void aReceiptReadsBackAsWritten() {
        Receipt r = receipt();
        assertThat(Receipt.decode(r.encode(), "k")).isEqualTo(r);
    }

    @Test
    void aKeyGivenTwiceIsDamage() {
        String json = new String(receipt().encode(), StandardCharsets.UTF_8);
        assertThat(json).contains("\"shard\":3,");
        byte[] twice = json.replace("\"shard\":3,", "\"shard\":3,\"shard\":4,").getBytes(StandardCharsets.UTF_8);
        assertThatThrownBy(() -> Receipt.decode(twice, "runs/r/receipts/x.json"))
                .isInstanceOf(DamagedException.class)
                .hasMessageContaining("receipt runs/r/receipts/x.json is invalid")
                .hasMessageContaining("shard");
    }
}
