package dev.vigilo.plan;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.vigilo.storage.ObjectRef;
import java.util.ArrayList;
import java.util.List;

/**
 * A chunk index document, format {@code vigilo.plan.chunk-index} version 1 (docs/formats/plan-index.md). Level 0
 * entries reference chunk files, level L entries reference level L-1 documents; entries tile
 * {@code [first_chunk, first_chunk + chunk_count)} and the case range exactly. Immutable.
 */
record ChunkIndexDocument(
        int level, long firstChunk, long chunkCount, long firstOrdinal, long caseCount, List<Entry> entries) {
    static final String FORMAT = "vigilo.plan.chunk-index";

    ChunkIndexDocument {
        entries = List.copyOf(entries);
    }

    /** A child reference with the chunk and case range it covers. */
    record Entry(ObjectRef ref, long firstChunk, long chunkCount, long firstOrdinal, long caseCount) {}

    /** The document of {@code level} holding {@code entries} (at least one, in order): its range is theirs. */
    static ChunkIndexDocument of(int level, List<Entry> entries) {
        if (entries.isEmpty()) {
            throw new IllegalArgumentException("a chunk index document has at least one entry");
        }
        long chunkCount = 0;
        long caseCount = 0;
        for (Entry e : entries) {
            chunkCount += e.chunkCount();
            caseCount += e.caseCount();
        }
        Entry first = entries.get(0);
        return new ChunkIndexDocument(level, first.firstChunk(), chunkCount, first.firstOrdinal(), caseCount, entries);
    }

    byte[] encode() {
        ObjectNode n = JsonNodeFactory.instance.objectNode();
        n.put("format", FORMAT);
        n.put("version", PlanLayout.FORMAT_VERSION);
        n.put("level", level);
        n.put("first_chunk", firstChunk);
        n.put("chunk_count", chunkCount);
        n.put("first_ordinal", firstOrdinal);
        n.put("case_count", caseCount);
        ArrayNode a = n.putArray("entries");
        for (Entry e : entries) {
            ObjectNode c = a.addObject();
            PlanJson.putRef(c, e.ref());
            c.put("first_chunk", e.firstChunk());
            c.put("chunk_count", e.chunkCount());
            c.put("first_ordinal", e.firstOrdinal());
            c.put("case_count", e.caseCount());
        }
        return PlanJson.encode(n);
    }

    /** Decodes and checks level, tiling and bounds against what the parent's entry promised. */
    static ChunkIndexDocument decode(
            byte[] bytes, int expectedLevel, long firstChunk, long chunkCount, long firstOrdinal, long caseCount) {
        PlanJson.expect(bytes.length <= PlanLayout.INDEX_MAX_BYTES, "document exceeds 256 KiB");
        JsonNode n = PlanJson.decode(bytes, FORMAT, PlanLayout.FORMAT_VERSION);
        int level = (int) PlanJson.num(n, "level");
        PlanJson.expect(
                expectedLevel < 0 ? level >= 0 && level < PlanLayout.INDEX_MAX_LEVELS : level == expectedLevel,
                "level " + level + " is not the expected " + expectedLevel);
        PlanJson.expect(
                PlanJson.num(n, "first_chunk") == firstChunk
                        && PlanJson.num(n, "chunk_count") == chunkCount
                        && PlanJson.num(n, "first_ordinal") == firstOrdinal
                        && PlanJson.num(n, "case_count") == caseCount,
                "range does not match its parent's entry");
        JsonNode a = PlanJson.array(n, "entries");
        PlanJson.expect(
                a.size() >= 1 && a.size() <= PlanLayout.INDEX_MAX_ENTRIES,
                "entry count " + a.size() + " out of 1..512");
        List<Entry> entries = new ArrayList<>(a.size());
        long nextChunk = firstChunk;
        long nextOrdinal = firstOrdinal;
        for (int i = 0; i < a.size(); i++) {
            JsonNode c = a.get(i);
            Entry e = new Entry(
                    PlanJson.ref(c),
                    PlanJson.num(c, "first_chunk"),
                    PlanJson.num(c, "chunk_count"),
                    PlanJson.num(c, "first_ordinal"),
                    PlanJson.num(c, "case_count"));
            PlanJson.expect(
                    e.firstChunk() == nextChunk
                            && e.firstOrdinal() == nextOrdinal
                            && e.chunkCount() >= 1
                            && e.caseCount() >= 1
                            && (level > 0 || e.chunkCount() == 1),
                    "entries[" + i + "] breaks the tiling");
            nextChunk += e.chunkCount();
            nextOrdinal += e.caseCount();
            entries.add(e);
        }
        PlanJson.expect(
                nextChunk == firstChunk + chunkCount && nextOrdinal == firstOrdinal + caseCount,
                "entries do not cover the document's range");
        return new ChunkIndexDocument(level, firstChunk, chunkCount, firstOrdinal, caseCount, entries);
    }
}
