package dev.vigilo.plan;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.vigilo.storage.Sha256;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;

/**
 * Chunk files keep their bytes: the streaming encoder writes exactly what the plan's tree encoding of the same fields
 * writes (the encoding chunk files were first written with), for any ids and masks, and a small chunk encodes to the
 * documented bytes.
 */
class ChunkFileEncodingTest {
    @Provide
    Arbitrary<List<String>> ids() {
        return Arbitraries.strings()
                .all()
                .ofMinLength(1)
                .ofMaxLength(40)
                .filter(s -> StandardCharsets.UTF_8.newEncoder().canEncode(s))
                .list()
                .ofMinSize(1)
                .ofMaxSize(PlanShape.CHUNK_CASES);
    }

    @Property(tries = 200)
    void streamingEncodingEqualsTheTreeEncoding(
            @ForAll("ids") List<String> ids,
            @ForAll @LongRange(min = 0, max = Long.MAX_VALUE / 2) long index,
            @ForAll @LongRange(min = 0, max = Long.MAX_VALUE / 2) long firstOrdinal,
            @ForAll long masks,
            @ForAll @IntRange(min = 0, max = 63) int shift) {
        UUID run = new UUID(index * 31 + masks, firstOrdinal ^ masks);
        List<ChunkFile.Entry> cases = new ArrayList<>();
        for (int i = 0; i < ids.size(); i++) {
            cases.add(new ChunkFile.Entry(
                    firstOrdinal + i,
                    ids.get(i),
                    Sha256.of(ids.get(i).getBytes(StandardCharsets.UTF_8)),
                    masks >>> (i % 64),
                    (masks << shift) ^ i));
        }
        ChunkFile file = new ChunkFile(
                run,
                index,
                Fold.chunkId(run, index),
                PlanShape.shardOf(index),
                firstOrdinal,
                cases,
                ChunkFile.membershipOf(cases));
        assertThat(file.encode()).isEqualTo(treeEncoding(file));
    }

    @Example
    void aSmallChunkEncodesToTheDocumentedBytes() {
        UUID run = UUID.fromString("11111111-2222-4333-8444-555555555555");
        Sha256 sha = Sha256.of("x".getBytes(StandardCharsets.UTF_8));
        List<ChunkFile.Entry> cases = List.of(
                new ChunkFile.Entry(700, "q-700", sha, 0x3, 0x5),
                new ChunkFile.Entry(701, "é \"q\"\u0001/", sha, -1L, 0));
        Sha256 membership = ChunkFile.membershipOf(cases);
        ChunkFile file = new ChunkFile(run, 7, Fold.chunkId(run, 7), 7, 700, cases, membership);
        String hex = sha.toHex();
        assertThat(new String(file.encode(), StandardCharsets.UTF_8))
                .isEqualTo(
                        "{\"format\":\"vigilo.plan.chunk\",\"version\":1,\"run_id\":\"" + run + "\",\"chunk_index\":7,"
                                + "\"chunk_id\":\"" + Fold.chunkId(run, 7) + "\",\"shard\":7,\"first_ordinal\":700,"
                                + "\"case_count\":2,\"membership_sha256\":\"" + membership.toHex() + "\",\"cases\":["
                                + "{\"ordinal\":700,\"id\":\"q-700\",\"sha256\":\"" + hex + "\",\"evaluators\":\"3\","
                                + "\"gates\":\"5\"},"
                                + "{\"ordinal\":701,\"id\":\"é \\\"q\\\"\\u0001/\",\"sha256\":\"" + hex + "\","
                                + "\"evaluators\":\"ffffffffffffffff\",\"gates\":\"0\"}]}\n");
    }

    /** The tree encoding of a chunk file's fields, as {@link PlanJson#encode} writes every tree-built plan file. */
    private static byte[] treeEncoding(ChunkFile file) {
        ObjectNode n = JsonNodeFactory.instance.objectNode();
        n.put("format", ChunkFile.FORMAT);
        n.put("version", PlanLayout.FORMAT_VERSION);
        n.put("run_id", file.runId().toString());
        n.put("chunk_index", file.chunkIndex());
        n.put("chunk_id", file.chunkId().toString());
        n.put("shard", file.shard());
        n.put("first_ordinal", file.firstOrdinal());
        n.put("case_count", file.cases().size());
        n.put("membership_sha256", file.membership().toHex());
        ArrayNode a = n.putArray("cases");
        for (ChunkFile.Entry e : file.cases()) {
            ObjectNode c = a.addObject();
            c.put("ordinal", e.ordinal());
            c.put("id", e.id());
            c.put("sha256", e.sha256().toHex());
            c.put("evaluators", Long.toHexString(e.evaluators()));
            c.put("gates", Long.toHexString(e.gates()));
        }
        return PlanJson.encode(n);
    }
}
