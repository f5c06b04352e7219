package dev.vigilo.exec.record;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vigilo.common.errors.DamagedException;
import dev.vigilo.storage.Deadline;
import dev.vigilo.storage.ObjectRef;
import dev.vigilo.storage.ObjectStore;
import dev.vigilo.storage.ObjectStores;
import dev.vigilo.storage.StorageConfig;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Partial receipt chains (docs/formats/exec-partial-receipt.md): written and read back byte for byte, verified link by
 * link from the head, and refused (damage) when a link is altered, of another chunk, out of order, or lists a case
 * twice; and the version 7 receipt that carries their entries.
 */
class PartialReceiptTest {
    @TempDir
    Path dir;

    ObjectStore store;
    Receipt sample;

    @BeforeEach
    void setUp() {
        store = ObjectStores.open(StorageConfig.localDefault(dir).defaultStore());
        sample = FormatSamples.usageReceipt(); // cases 700, 701, 702 of chunk 7, lease generation 2
    }

    @AfterEach
    void tearDown() throws Exception {
        store.close();
    }

    private PartialReceipt link(long generation, int sequence, Optional<ObjectRef> previous, int... cases) {
        return link(sample.chunkId(), generation, sequence, previous, cases);
    }

    private PartialReceipt link(
            UUID chunkId, long generation, int sequence, Optional<ObjectRef> previous, int... cases) {
        return new PartialReceipt(
                sample.runId(),
                sample.chunkIndex(),
                chunkId,
                sample.shard(),
                generation,
                sample.worker(),
                sample.membership(),
                1,
                1,
                sequence,
                previous,
                Instant.parse("2026-12-03T01:00:00Z"),
                java.util.Arrays.stream(cases)
                        .mapToObj(i -> sample.cases().get(i))
                        .toList());
    }

    private ObjectRef write(PartialReceipt p) {
        return store.create(
                PartialReceipt.key(p.runId(), p.chunkIndex(), p.leaseGeneration(), p.sequence()),
                PartialReceiptParser.toJson(p),
                Deadline.after(Duration.ofSeconds(10)));
    }

    private PartialChain.Expected expected(long before) {
        return new PartialChain.Expected(
                sample.runId(),
                sample.chunkIndex(),
                sample.chunkId(),
                sample.membership(),
                1,
                1,
                before,
                sample.cases().stream()
                        .map(c -> new PartialChain.Case(c.ordinal(), c.id(), c.caseSha256()))
                        .toList());
    }

    @Test
    void transcriptSlicesMakeAVersion8ReceiptAndAVersion2LinkThatReadBackEqual() {
        // Every case's transcripts as slices of a container, as a worker with transcript containers writes them.
        List<Receipt.CaseResult> sliced = sample.cases().stream()
                .map(c -> c.withTranscripts(c.transcripts().stream()
                        .map(t -> Receipt.TranscriptRef.slice(t.attempt(), t.ref(), 1000L * c.ordinal() + t.attempt()))
                        .toList()))
                .toList();
        Receipt r = new Receipt(
                sample.runId(),
                sample.chunkIndex(),
                sample.chunkId(),
                sample.shard(),
                sample.leaseGeneration(),
                sample.worker(),
                sample.membership(),
                sample.startedAt(),
                sample.finishedAt(),
                sample.evaluators(),
                sample.gates(),
                sliced,
                Optional.empty(),
                Optional.empty());
        String json = new String(ReceiptParser.toJson(r), StandardCharsets.UTF_8);
        assertThat(json)
                .startsWith("{\"format\":\"vigilo.exec.receipt\",\"version\":8,")
                .contains("\"rerun\":null,\"resumed_from\":null,")
                .contains("\"offset\":700001}");
        Receipt read = ReceiptParser.fromJson(json.getBytes(StandardCharsets.UTF_8), "r");
        assertThat(read.cases()).isEqualTo(sliced);
        assertThat(read.resumed()).isEmpty();
        assertThat(read.rerun()).isEmpty();
        // The same receipt without slices is written as before (no offset, an older version).
        assertThat(new String(ReceiptParser.toJson(sample), StandardCharsets.UTF_8))
                .doesNotContain("\"offset\"")
                .doesNotContain("\"version\":8");

        PartialReceipt p = new PartialReceipt(
                sample.runId(),
                sample.chunkIndex(),
                sample.chunkId(),
                sample.shard(),
                2,
                sample.worker(),
                sample.membership(),
                1,
                1,
                1,
                Optional.empty(),
                Instant.parse("2026-12-03T01:00:00Z"),
                sliced);
        byte[] bytes = PartialReceiptParser.toJson(p);
        assertThat(new String(bytes, StandardCharsets.UTF_8))
                .startsWith("{\"format\":\"vigilo.exec.partial-receipt\",\"version\":2,");
        PartialReceiptParser.Read back = PartialReceiptParser.fromJson(bytes, "p");
        assertThat(back.receipt().cases()).isEqualTo(sliced);
        for (int i = 0; i < sliced.size(); i++) {
            assertThat(back.entryBytes().get(i)).isEqualTo(ReceiptParser.caseBytes(sliced.get(i)));
        }
        assertThat(new String(PartialReceiptParser.toJson(link(2, 1, Optional.empty(), 0)), StandardCharsets.UTF_8))
                .contains("\"version\":1,");
    }

    @Test
    void aChainIsWrittenReadBackAndVerifiedFromItsHead() {
        ObjectRef p1 = write(link(1, 1, Optional.empty(), 0));
        ObjectRef p2 = write(link(1, 2, Optional.of(p1), 2));
        // A resumed holder (generation 2) continues the same chain.
        ObjectRef p3 = write(link(2, 3, Optional.of(p2), 1));
        assertThat(p3.key().value()).isEqualTo("runs/" + sample.runId() + "/receipts/partial/0000000007-g2-p3.json");

        PartialChain.Chain chain = PartialChain.read(store, p3, expected(3));
        assertThat(chain.head()).isEqualTo(p3);
        assertThat(chain.sequence()).isEqualTo(3);
        assertThat(chain.entries().keySet()).containsExactly(700L, 701L, 702L);
        assertThat(chain.entries().get(700L).generation()).isEqualTo(1);
        assertThat(chain.entries().get(701L).generation()).isEqualTo(2);
        for (Receipt.CaseResult c : sample.cases()) {
            PartialChain.Entry e = chain.entries().get(c.ordinal());
            assertThat(e.result()).isEqualTo(c);
            assertThat(e.bytes()).isEqualTo(ReceiptParser.caseBytes(c));
        }
        // The writer's bytes read back and written again are the same bytes.
        byte[] bytes = PartialReceiptParser.toJson(link(1, 2, Optional.of(p1), 2));
        PartialReceiptParser.Read read = PartialReceiptParser.fromJson(bytes, "p2");
        assertThat(PartialReceiptParser.toJson(read.receipt())).isEqualTo(bytes);
        assertThat(new String(bytes, StandardCharsets.UTF_8))
                .startsWith("{\"format\":\"vigilo.exec.partial-receipt\",\"version\":1,\"run_id\":\"")
                .contains("\"settlement_generation\":1,\"epochs\":1,\"sequence\":2,\"previous\":{\"key\":");
        // Read from an earlier head, the chain holds only what was written up to it.
        assertThat(PartialChain.read(store, p2, expected(2)).entries().keySet()).containsExactly(700L, 702L);
    }

    @Test
    void anAlteredOrLostLinkIsDamage() {
        ObjectRef p1 = write(link(1, 1, Optional.empty(), 0));
        ObjectRef altered = new ObjectRef(p1.key(), p1.length(), FormatSamples.sha("other bytes"));
        ObjectRef p2 = write(link(1, 2, Optional.of(altered), 1));
        assertThatThrownBy(() -> PartialChain.read(store, p2, expected(2)))
                .isInstanceOf(DamagedException.class)
                .hasMessageContaining("partial receipt " + p1.key())
                .hasMessageContaining("altered");
        ObjectRef lost = new ObjectRef(PartialReceipt.key(sample.runId(), 7, 1, 9), p1.length(), p1.sha256());
        assertThatThrownBy(() -> PartialChain.read(store, lost, expected(2)))
                .isInstanceOf(DamagedException.class)
                .hasMessageContaining("missing");
    }

    @Test
    void aLinkOfAnotherChunkOrGenerationOrOrderOrACaseListedTwiceIsDamage() {
        ObjectRef other = write(link(UUID.randomUUID(), 1, 5, Optional.of(FormatSamples.ref("x", 1)), 0));
        assertThatThrownBy(() -> PartialChain.read(store, other, expected(2)))
                .isInstanceOf(DamagedException.class)
                .hasMessageContaining("is not a partial receipt of chunk 7");
        // Written under the reader's own generation (or later): not an earlier holder's.
        ObjectRef own = write(link(2, 1, Optional.empty(), 0));
        assertThatThrownBy(() -> PartialChain.read(store, own, expected(2)))
                .isInstanceOf(DamagedException.class)
                .hasMessageContaining("after the generation");
        ObjectRef p1 = write(link(1, 1, Optional.empty(), 0));
        ObjectRef twice = write(link(1, 2, Optional.of(p1), 0, 1));
        assertThatThrownBy(() -> PartialChain.read(store, twice, expected(2)))
                .isInstanceOf(DamagedException.class)
                .hasMessageContaining("a later link of its chain records too");
        ObjectRef skipped = store.create(
                PartialReceipt.key(sample.runId(), 7, 1, 3),
                PartialReceiptParser.toJson(link(1, 3, Optional.of(p1), 1)),
                Deadline.after(Duration.ofSeconds(10)));
        assertThatThrownBy(() -> PartialChain.read(store, skipped, expected(2)))
                .isInstanceOf(DamagedException.class)
                .hasMessageContaining("is link 1 of its chain, where link 2 was named");
        // A case the chunk does not have (here: the reader expects only 700 and 701).
        PartialChain.Expected fewer = new PartialChain.Expected(
                sample.runId(),
                7,
                sample.chunkId(),
                sample.membership(),
                1,
                1,
                4,
                expected(4).cases().subList(0, 2));
        ObjectRef p2 = write(link(3, 2, Optional.of(write(link(3, 1, Optional.empty(), 0))), 2));
        assertThatThrownBy(() -> PartialChain.read(store, p2, fewer))
                .isInstanceOf(DamagedException.class)
                .hasMessageContaining("which is not a case of chunk 7");
    }

    @Test
    void aPartialReceiptIsReadStrictly() {
        String json = new String(PartialReceiptParser.toJson(link(1, 1, Optional.empty(), 0)), StandardCharsets.UTF_8);
        assertThatThrownBy(() -> PartialReceiptParser.fromJson(
                        json.replace("\"version\":1", "\"version\":3").getBytes(StandardCharsets.UTF_8), "p"))
                .isInstanceOf(DamagedException.class)
                .hasMessageContaining("not one this build reads [1, 2]");
        assertThatThrownBy(() -> PartialReceiptParser.fromJson(
                        json.replace(",\"sequence\":1", "").getBytes(StandardCharsets.UTF_8), "p"))
                .isInstanceOf(DamagedException.class)
                .hasMessageContaining("sequence");
        assertThatThrownBy(() -> PartialReceiptParser.fromJson(
                        json.replace("\"previous\":null", "\"previous\":null,\"previous\":null")
                                .getBytes(StandardCharsets.UTF_8),
                        "p"))
                .isInstanceOf(DamagedException.class);
    }

    @Test
    void aResumedReceiptIsVersion7AndOthersKeepTheirVersion() {
        ObjectRef head = FormatSamples.ref("runs/" + sample.runId() + "/receipts/partial/0000000007-g1-p1.json", 99);
        Receipt resumed = new Receipt(
                sample.runId(),
                sample.chunkIndex(),
                sample.chunkId(),
                sample.shard(),
                sample.leaseGeneration(),
                sample.worker(),
                sample.membership(),
                sample.startedAt(),
                sample.finishedAt(),
                sample.evaluators(),
                sample.gates(),
                sample.cases(),
                Optional.empty(),
                Optional.of(new Receipt.Resumed(head, List.of(new Receipt.Carried(700, 1)))));
        byte[] bytes = ReceiptParser.toJson(resumed);
        String json = new String(bytes, StandardCharsets.UTF_8);
        assertThat(json)
                .startsWith("{\"format\":\"vigilo.exec.receipt\",\"version\":7,")
                .contains("\"epochs\":1,\"rerun\":null,\"resumed_from\":{\"head\":{\"key\":\""
                        + head.key().value()
                        + "\",\"length\":99,\"sha256\":\"" + head.sha256().toHex()
                        + "\"},\"carried\":[{\"ordinal\":700,\"lease_generation\":1}]},\"cases\":[")
                .contains("\"kept_files\":[]");
        Receipt read = ReceiptParser.fromJson(bytes, "r");
        assertThat(read).isEqualTo(resumed);
        assertThat(ReceiptParser.toJson(read)).isEqualTo(bytes);
        // The carried entry's bytes in the receipt are its case bytes (what verify compares with the partial's).
        assertThat(json)
                .contains(new String(ReceiptParser.caseBytes(sample.cases().get(0)), StandardCharsets.UTF_8));
        // A chunk that never had a partial keeps writing version 4.
        assertThat(new String(ReceiptParser.toJson(sample), StandardCharsets.UTF_8))
                .startsWith("{\"format\":\"vigilo.exec.receipt\",\"version\":4,");
        // A carried entry of the receipt's own (or a later) generation is damage.
        String own = json.replace("\"lease_generation\":1}]", "\"lease_generation\":2}]");
        assertThatThrownBy(() -> ReceiptParser.fromJson(own.getBytes(StandardCharsets.UTF_8), "r"))
                .isInstanceOf(DamagedException.class)
                .hasMessageContaining("carried case 700 of lease generation 2");
    }

    /** The version 7 sample: {@link FormatSamples#usageReceipt()} resumed, case 700 carried from generation 1. */
    static Receipt resumedSample() {
        Receipt r = FormatSamples.usageReceipt();
        return new Receipt(
                r.runId(),
                r.chunkIndex(),
                r.chunkId(),
                r.shard(),
                r.leaseGeneration(),
                r.worker(),
                r.membership(),
                r.startedAt(),
                r.finishedAt(),
                r.evaluators(),
                r.gates(),
                r.cases(),
                Optional.empty(),
                Optional.of(new Receipt.Resumed(
                        FormatSamples.ref("runs/" + r.runId() + "/receipts/partial/0000000007-g1-p1.json", 2048),
                        List.of(new Receipt.Carried(700, 1)))));
    }

    /** The partial receipt sample: link 2 of generation 1, cases 701 and 702 of the usage receipt. */
    static PartialReceipt partialSample() {
        Receipt r = FormatSamples.usageReceipt();
        return new PartialReceipt(
                r.runId(),
                r.chunkIndex(),
                r.chunkId(),
                r.shard(),
                1,
                r.worker(),
                r.membership(),
                1,
                1,
                2,
                Optional.of(FormatSamples.ref("runs/" + r.runId() + "/receipts/partial/0000000007-g1-p1.json", 2048)),
                Instant.parse("2026-12-03T01:00:00.5Z"),
                r.cases().subList(1, 3));
    }

    @Test
    void theBytesOfVersion7AndOfAPartialReceiptArePinned() throws Exception {
        byte[] receipt = FormatCompatibilityTest.resource("receipt-v7.json");
        assertThat(ReceiptParser.fromJson(receipt, "receipt-v7.json")).isEqualTo(resumedSample());
        assertThat(ReceiptParser.toJson(resumedSample())).isEqualTo(receipt);
        byte[] partial = FormatCompatibilityTest.resource("partial-receipt-v1.json");
        assertThat(PartialReceiptParser.fromJson(partial, "partial-receipt-v1.json")
                        .receipt())
                .isEqualTo(partialSample());
        assertThat(PartialReceiptParser.toJson(partialSample())).isEqualTo(partial);
    }
}
