package dev.vigilo.plan;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vigilo.storage.ObjectRef;
import dev.vigilo.storage.Sha256;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** Each plan format's parser: round trip, newer versions, counts, digests and links. */
class PlanFormatsTest {
    static final UUID RUN = UUID.fromString("11111111-2222-4333-8444-555555555555");

    static ChunkFile chunk(long index, long first, int n) {
        List<ChunkFile.Entry> cases = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            cases.add(new ChunkFile.Entry(
                    first + i, "c-" + (first + i), Sha256.of(("case" + (first + i)).getBytes()), 0b11, 0b101));
        }
        return new ChunkFile(
                RUN,
                index,
                Fold.chunkId(RUN, index),
                PlanShape.shardOf(index),
                first,
                cases,
                ChunkFile.membershipOf(cases));
    }

    static byte[] edit(byte[] bytes, String from, String to) {
        String s = new String(bytes, StandardCharsets.UTF_8);
        assertThat(s).contains(from);
        return s.replaceFirst(java.util.regex.Pattern.quote(from), java.util.regex.Matcher.quoteReplacement(to))
                .getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void chunkFilesRoundTripAndRejectInconsistencies() {
        ChunkFile c = chunk(130, 13_000, 100);
        byte[] bytes = c.encode();
        assertThat(ChunkFile.decode(bytes)).isEqualTo(c);
        assertThat(c.encode()).isEqualTo(bytes);
        assertThat(c.shard()).isEqualTo(2);
        assertThatThrownBy(() -> ChunkFile.decode(edit(bytes, "\"version\":1", "\"version\":2")))
                .hasMessageContaining("newer");
        assertThatThrownBy(() -> ChunkFile.decode(edit(bytes, "\"id\":\"c-13005\"", "\"id\":\"c-x\"")))
                .hasMessageContaining("membership_sha256 does not match");
        assertThatThrownBy(() -> ChunkFile.decode(edit(bytes, "\"ordinal\":13005", "\"ordinal\":13006")))
                .hasMessageContaining("cases[5] has ordinal 13006");
        assertThatThrownBy(() -> ChunkFile.decode(edit(bytes, "\"case_count\":100", "\"case_count\":99")))
                .hasMessageContaining("case_count 99 does not match 100");
        assertThatThrownBy(() -> ChunkFile.decode(edit(bytes, "\"shard\":2", "\"shard\":3")))
                .hasMessageContaining("not chunk index mod 128");
        assertThatThrownBy(() -> ChunkFile.decode(edit(bytes, "vigilo.plan.chunk", "vigilo.plan.chunks")))
                .hasMessageContaining("format is");
        assertThatThrownBy(() -> ChunkFile.decode(edit(bytes, "\"ordinal\":13005", "\"ordinal\":13005.0")))
                .hasMessageContaining("field \"ordinal\" is missing or not an integer");
        assertThatThrownBy(() -> ChunkFile.decode(edit(bytes, "\"cases\":[", "\"cases\":{\"x\":[")))
                .isInstanceOf(PlanJson.FormatException.class);
        assertThatThrownBy(() -> ChunkFile.decode("[1]".getBytes(StandardCharsets.UTF_8)))
                .hasMessageContaining("not a JSON object");
    }

    @Test
    void aChunkFileReadsLikeATreeWhateverItsFieldOrderRepeatsOrUnknownFields() throws Exception {
        ChunkFile c = chunk(131, 13_100, 100);
        com.fasterxml.jackson.databind.node.ObjectNode tree =
                (com.fasterxml.jackson.databind.node.ObjectNode) ProfileJson.MAPPER.readTree(c.encode());
        // Cases first, header after, an unknown field, a field given twice (the last counts, as in a tree).
        com.fasterxml.jackson.databind.node.ObjectNode reordered = ProfileJson.MAPPER.createObjectNode();
        reordered.set("cases", tree.get("cases"));
        reordered.put("extra", "ignored");
        tree.fields().forEachRemaining(e -> {
            if (!e.getKey().equals("cases")) {
                reordered.set(e.getKey(), e.getValue());
            }
        });
        String json = ProfileJson.MAPPER.writeValueAsString(reordered);
        String twice = json.replaceFirst("\\{", "{\"shard\":99,");
        assertThat(ChunkFile.decode(twice.getBytes(StandardCharsets.UTF_8))).isEqualTo(c);
    }

    @Test
    void chunkKeysPadTheirIndex() {
        assertThat(PlanLayout.chunk(RUN, 42).value()).isEqualTo("plans/" + RUN + "/chunks/0000000042.json");
    }

    @Test
    void chunkIdsAreDeterministicVersion8AndDistinct() {
        assertThat(Fold.chunkId(RUN, 7)).isEqualTo(Fold.chunkId(RUN, 7));
        assertThat(Fold.chunkId(RUN, 7)).isNotEqualTo(Fold.chunkId(RUN, 8));
        assertThat(Fold.chunkId(RUN, 7)).isNotEqualTo(Fold.chunkId(UUID.randomUUID(), 7));
        assertThat(Fold.chunkId(RUN, 7).version()).isEqualTo(8);
        assertThat(Fold.chunkId(RUN, 7).variant()).isEqualTo(2);
    }

    @Test
    void indexDocumentsCheckTheirTiling() {
        ObjectRef a = ObjectRef.of(PlanLayout.chunk(RUN, 0), chunk(0, 0, 100).encode());
        ObjectRef b = ObjectRef.of(PlanLayout.chunk(RUN, 1), chunk(1, 100, 40).encode());
        ChunkIndexDocument doc = new ChunkIndexDocument(
                0,
                0,
                2,
                0,
                140,
                List.of(new ChunkIndexDocument.Entry(a, 0, 1, 0, 100), new ChunkIndexDocument.Entry(b, 1, 1, 100, 40)));
        byte[] bytes = doc.encode();
        assertThat(ChunkIndexDocument.decode(bytes, 0, 0, 2, 0, 140)).isEqualTo(doc);
        assertThatThrownBy(() -> ChunkIndexDocument.decode(bytes, 0, 0, 2, 0, 141))
                .hasMessageContaining("range does not match");
        assertThatThrownBy(() -> ChunkIndexDocument.decode(bytes, 1, 0, 2, 0, 140))
                .hasMessageContaining("level 0");
        byte[] gap = edit(
                bytes,
                "\"first_chunk\":1,\"chunk_count\":1,\"first_ordinal\":100",
                "\"first_chunk\":1,\"chunk_count\":1,\"first_ordinal\":101");
        assertThatThrownBy(() -> ChunkIndexDocument.decode(gap, 0, 0, 2, 0, 140))
                .hasMessageContaining("entries[1]");
        assertThatThrownBy(
                        () -> ChunkIndexDocument.decode(edit(bytes, "\"version\":1", "\"version\":9"), 0, 0, 2, 0, 140))
                .hasMessageContaining("newer");
    }

    @Test
    void gateFilesCheckOrderSumsAndLinks() {
        Profile.Gate gate = new Profile.Gate("g", List.of("e"), Profile.Selector.ALL, 0.5);
        ObjectRef next = ObjectRef.of(PlanLayout.gate(RUN, 1), new byte[] {1});
        GateFile g = new GateFile(
                RUN,
                0,
                2,
                gate,
                7,
                List.of(new GateFile.ShardCount(0, 7), new GateFile.ShardCount(1, 0)),
                Optional.of(next));
        byte[] bytes = g.encode();
        assertThat(GateFile.decode(bytes, RUN, 0)).isEqualTo(g);
        assertThatThrownBy(() -> GateFile.decode(bytes, RUN, 1)).hasMessageContaining("not the expected 1");
        assertThatThrownBy(() -> GateFile.decode(edit(bytes, "\"count\":7", "\"count\":6"), RUN, 0))
                .hasMessageContaining("sum to 6");
        assertThatThrownBy(() -> GateFile.decode(edit(bytes, "{\"shard\":1", "{\"shard\":0"), RUN, 0))
                .hasMessageContaining("not sorted");
        GateFile last = new GateFile(RUN, 1, 2, gate, 7, List.of(new GateFile.ShardCount(0, 7)), Optional.of(next));
        assertThatThrownBy(() -> GateFile.decode(last.encode(), RUN, 1)).hasMessageContaining("chain link");
        assertThatThrownBy(() -> GateFile.decode(bytes, UUID.randomUUID(), 0)).hasMessageContaining("another run");
    }

    @Test
    void manifestsCheckTheirTotals() {
        ObjectRef r = ObjectRef.of(PlanLayout.configuration(RUN), new byte[] {1});
        Sha256 h = Sha256.of(new byte[] {2});
        PlanManifest m = new PlanManifest(
                RUN,
                UUID.randomUUID(),
                UUID.randomUUID(),
                h,
                140,
                2,
                r,
                r,
                1,
                r,
                1,
                List.of(new PlanManifest.Shard(0, 100, 1, h, h), new PlanManifest.Shard(1, 40, 1, h, h)));
        byte[] bytes = m.encode();
        assertThat(PlanManifest.decode(bytes)).isEqualTo(m);
        assertThatThrownBy(() -> PlanManifest.decode(edit(bytes, "\"cases\":40", "\"cases\":41")))
                .hasMessageContaining("shard totals");
        assertThatThrownBy(() -> PlanManifest.decode(edit(bytes, "\"chunk_cases\":100", "\"chunk_cases\":50")))
                .hasMessageContaining("chunk size");
    }

    @Test
    void configurationsCheckTheFrozenProfile() throws Exception {
        Profile p = ProfileParser.parse(PlanFixture.PROFILE);
        var entry = new dev.vigilo.dataset.DatasetEntry(
                UUID.randomUUID(),
                "d",
                Sha256.of(new byte[] {1}),
                10,
                UUID.randomUUID(),
                140,
                ObjectRef.of(dev.vigilo.storage.ObjectKey.of("datasets/index/aa/x.json"), new byte[] {1}),
                1,
                new dev.vigilo.storage.StoreBinding("local:/x"),
                java.time.Instant.EPOCH);
        byte[] bytes = PlanConfiguration.encode(RUN, p, entry, 2, 2, new long[] {140, 47}, new long[] {140, 47, 20}, 0);
        Sha256 sha = ProfileJson.sha256(p);
        assertThat(PlanConfiguration.decode(bytes, RUN, sha)
                        .at("/executability/chunks")
                        .asLong())
                .isEqualTo(2);
        assertThat(new String(bytes, StandardCharsets.UTF_8)).doesNotContain("local:/x");
        assertThatThrownBy(() -> PlanConfiguration.decode(
                        edit(bytes, "\"min_pass_rate\":0.9", "\"min_pass_rate\":0.1"), RUN, sha))
                .hasMessageContaining("profile body does not match");
        assertThatThrownBy(() -> PlanConfiguration.decode(bytes, RUN, Sha256.of(new byte[0])))
                .hasMessageContaining("different profile");
    }
}
