package dev.vigilo.exec.record;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vigilo.common.errors.DamagedException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * A persisted receipt is read strictly: a key given twice, a version this build does not know, a missing or mistyped
 * field are damage, never "the last one wins", "the nearest version" or a default value.
 */
class ReceiptStrictnessTest {
    private static final String KEY = "runs/r/receipts/x.json";

    private static String written() throws IOException {
        return new String(FormatCompatibilityTest.resource("receipt-v2.json"), StandardCharsets.UTF_8);
    }

    private static DamagedException damage(String json) {
        Throwable t = org.assertj.core.api.Assertions.catchThrowable(
                () -> ReceiptParser.fromJson(json.getBytes(StandardCharsets.UTF_8), KEY));
        assertThat(t).isInstanceOf(DamagedException.class).hasMessageContaining("receipt " + KEY + " is invalid");
        return (DamagedException) t;
    }

    private static String replaceOnce(String json, String from, String to) {
        assertThat(json).contains(from);
        return json.replaceFirst(java.util.regex.Pattern.quote(from), java.util.regex.Matcher.quoteReplacement(to));
    }

    @Test
    void aReceiptReadsBackAsWritten() {
        Receipt r = FormatSamples.usageReceipt();
        assertThat(ReceiptParser.fromJson(ReceiptParser.toJson(r), "k")).isEqualTo(r);
    }

    @Test
    void aKeyGivenTwiceIsDamage() throws IOException {
        String twice = replaceOnce(written(), "\"shard\":7,", "\"shard\":7,\"shard\":4,");
        assertThat(damage(twice)).hasMessageContaining("shard");
    }

    @Test
    void aKeyGivenTwiceInACaseIsDamage() throws IOException {
        String twice = replaceOnce(written(), "\"agent_ms\":12,", "\"agent_ms\":12,\"agent_ms\":13,");
        assertThat(damage(twice)).hasMessageContaining("agent_ms");
    }

    @Test
    void aNewerVersionIsRefusedAsUnsupported() throws IOException {
        String newer = replaceOnce(written(), "\"version\":2,", "\"version\":9,");
        assertThat(damage(newer))
                .hasMessageContaining("version 9 is not one this build reads [1, 2, 3, 4, 5, 6, 7, 8]")
                .hasMessageContaining("a newer Vigilo wrote it");
    }

    @Test
    void aVersionThatIsNotAnIntegerIsRefused() throws IOException {
        assertThat(damage(replaceOnce(written(), "\"version\":2,", "\"version\":\"2\",")))
                .hasMessageContaining("is not one this build reads");
        assertThat(damage(replaceOnce(written(), "\"version\":2,", "")))
                .hasMessageContaining("is not one this build reads");
    }

    @Test
    void anotherFormatIsRefused() throws IOException {
        assertThat(damage(replaceOnce(written(), "vigilo.exec.receipt", "vigilo.exec.snapshot")))
                .hasMessageContaining("not a vigilo.exec.receipt document");
    }

    @Test
    void aMissingFieldIsDamageNotADefault() throws IOException {
        // Without the check, a missing shard would read as shard 0.
        assertThat(damage(replaceOnce(written(), "\"shard\":7,", "")))
                .hasMessageContaining("field \"shard\" is missing");
    }

    @Test
    void aMissingFieldOfACaseIsDamageNamingTheCase() throws IOException {
        assertThat(damage(replaceOnce(written(), "\"attempts\":1,", "")))
                .hasMessageContaining("case 701: field \"attempts\" is missing");
        assertThat(damage(replaceOnce(written(), ",\"score\":0.75", "")))
                .hasMessageContaining("evaluator \"re\": field \"score\" is missing");
    }

    @Test
    void aMistypedFieldIsDamage() throws IOException {
        assertThat(damage(replaceOnce(written(), "\"chunk_index\":7,", "\"chunk_index\":\"7\",")))
                .hasMessageContaining("field \"chunk_index\" is \"7\", not an integer");
    }

    @Test
    void aVersion2ReceiptMustListTranscripts() throws IOException {
        String without = replaceOnce(written(), ",\"transcripts\":[]", "");
        assertThat(damage(without)).hasMessageContaining("case 702: field \"transcripts\" is missing");
        // Version 1 has no transcript lists: there, the same absence is valid.
        assertThat(ReceiptParser.fromJson(FormatCompatibilityTest.resource("receipt-v1.json"), KEY)
                        .cases())
                .hasSize(3);
    }

    @Test
    void tallyMismatchIsDamage() throws IOException {
        assertThat(damage(replaceOnce(written(), "\"cases_errored\":1,", "\"cases_errored\":0,")))
                .hasMessageContaining("case tallies do not match the entries");
    }

    @Test
    void anUnknownCaseStatusIsDamage() throws IOException {
        assertThatThrownBy(() -> ReceiptParser.fromJson(
                        replaceOnce(written(), "\"status\":\"errored\"", "\"status\":\"skipped\"")
                                .getBytes(StandardCharsets.UTF_8),
                        KEY))
                .isInstanceOf(DamagedException.class)
                .hasMessageContaining("case 702: status \"skipped\" is neither ok nor errored");
    }
}
