package dev.vigilo.dataset;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import dev.vigilo.storage.ObjectKey;
import dev.vigilo.storage.ObjectRef;
import dev.vigilo.storage.Sha256;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * One document of the multi-level dataset index, format {@code vigilo.dataset.index} version 1
 * (docs/formats/dataset.md): its level (0 = entries are case files), the ordinal range it covers, and its entries
 * in ordinal order. Encoding is deterministic, so equal documents have equal bytes and equal content-addressed
 * keys. Parsing checks the format, version, level and that the entries tile the range without gaps.
 *
 * @param level        0 for a leaf (entries reference case files), L for entries referencing level L-1 documents
 * @param firstOrdinal the first ordinal covered
 * @param caseCount    the number of cases covered (the sum of the entries' counts)
 * @param entries      1 to {@link DatasetLimits#INDEX_MAX_ENTRIES} entries, contiguous in ordinal order
 */
record IndexDocument(int level, long firstOrdinal, long caseCount, List<IndexEntry> entries) {
    static final String FORMAT = "vigilo.dataset.index";
    static final int VERSION = 1;

    IndexDocument {
        entries = List.copyOf(entries);
        if (level < 0 || level >= DatasetLimits.MAX_INDEX_LEVELS) {
            throw new IllegalArgumentException(
                    "index level " + level + " outside 0.." + (DatasetLimits.MAX_INDEX_LEVELS - 1));
        }
    }

    static IndexDocument of(int level, List<IndexEntry> entries) {
        if (entries.isEmpty()) {
            throw new IllegalArgumentException("an index document has at least one entry");
        }
        long count = 0;
        for (IndexEntry e : entries) {
            count += e.caseCount();
        }
        return new IndexDocument(level, entries.get(0).firstOrdinal(), count, entries);
    }

    byte[] encode() {
        ByteArrayOutputStream out = new ByteArrayOutputStream(256 + entries.size() * 200);
        try (JsonGenerator g = new JsonFactory().createGenerator(out)) {
            g.writeStartObject();
            g.writeStringField("format", FORMAT);
            g.writeNumberField("version", VERSION);
            g.writeNumberField("level", level);
            g.writeNumberField("first_ordinal", firstOrdinal);
            g.writeNumberField("case_count", caseCount);
            g.writeArrayFieldStart("entries");
            for (IndexEntry e : entries) {
                g.writeStartObject();
                g.writeStringField("key", e.ref().key().value());
                g.writeNumberField("length", e.ref().length());
                g.writeStringField("sha256", e.ref().sha256().toHex());
                g.writeNumberField("first_ordinal", e.firstOrdinal());
                g.writeNumberField("case_count", e.caseCount());
                g.writeEndObject();
            }
            g.writeEndArray();
            g.writeEndObject();
        } catch (IOException e) {
            throw new UncheckedIOException("in-memory JSON encoding failed", e);
        }
        out.write('\n');
        return out.toByteArray();
    }

    /**
     * Parses and checks an index document read from {@code key}.
     *
     * @param expectedLevel the level its parent implies, or -1 for the root (any level)
     * @throws DatasetDamagedException when the document is malformed or inconsistent
     */
    static IndexDocument decode(
            ObjectKey key, byte[] bytes, int expectedLevel, long expectedFirstOrdinal, long expectedCount) {
        Objects.requireNonNull(key, "key");
        JsonFactory factory = CaseFileFormat.Json.factory(bytes.length);
        String format = null;
        long version = -1;
        int level = -1;
        long first = -1;
        long count = -1;
        List<IndexEntry> entries = new ArrayList<>();
        try (JsonParser p = factory.createParser(bytes)) {
            require(key, p.nextToken() == JsonToken.START_OBJECT, "not a JSON object");
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String name = p.currentName();
                JsonToken value = p.nextToken();
                switch (name) {
                    case "format" -> format = p.getValueAsString();
                    case "version" -> version = p.getValueAsLong(-1);
                    case "level" -> level = p.getValueAsInt(-1);
                    case "first_ordinal" -> first = p.getValueAsLong(-1);
                    case "case_count" -> count = p.getValueAsLong(-1);
                    case "entries" -> {
                        require(key, value == JsonToken.START_ARRAY, "entries is not an array");
                        while (p.nextToken() == JsonToken.START_OBJECT) {
                            entries.add(parseEntry(key, p));
                            require(
                                    key,
                                    entries.size() <= DatasetLimits.INDEX_MAX_ENTRIES,
                                    "more than " + DatasetLimits.INDEX_MAX_ENTRIES + " entries");
                        }
                    }
                    default -> p.skipChildren();
                }
            }
        } catch (IOException e) {
            throw new DatasetDamagedException(key, "index document is not valid JSON: " + e.getMessage(), e);
        } catch (IllegalArgumentException e) {
            throw new DatasetDamagedException(key, "index document has an invalid entry: " + e.getMessage(), e);
        }
        require(key, FORMAT.equals(format), "format is " + format + ", not " + FORMAT);
        require(
                key,
                version == VERSION,
                "index version " + version + " is not supported (this build reads " + VERSION + ")");
        require(key, level >= 0 && level < DatasetLimits.MAX_INDEX_LEVELS, "level " + level + " is out of range");
        require(
                key,
                expectedLevel < 0 || level == expectedLevel,
                "level " + level + " where " + expectedLevel + " belongs");
        require(key, !entries.isEmpty(), "has no entries");
        long next = first;
        for (IndexEntry e : entries) {
            require(
                    key,
                    e.firstOrdinal() == next,
                    "entry " + e.ref().key() + " starts at ordinal " + e.firstOrdinal() + " where " + next
                            + " belongs");
            next += e.caseCount();
        }
        require(key, next - first == count, "entries cover " + (next - first) + " cases, the document says " + count);
        require(
                key,
                expectedFirstOrdinal < 0 || first == expectedFirstOrdinal,
                "starts at ordinal " + first + ", its parent says " + expectedFirstOrdinal);
        require(
                key,
                expectedCount < 0 || count == expectedCount,
                "covers " + count + " cases, its parent says " + expectedCount);
        return new IndexDocument(level, first, count, entries);
    }

    private static IndexEntry parseEntry(ObjectKey key, JsonParser p) throws IOException {
        String childKey = null;
        long length = -1;
        String sha = null;
        long first = -1;
        long count = -1;
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String name = p.currentName();
            p.nextToken();
            switch (name) {
                case "key" -> childKey = p.getValueAsString();
                case "length" -> length = p.getValueAsLong(-1);
                case "sha256" -> sha = p.getValueAsString();
                case "first_ordinal" -> first = p.getValueAsLong(-1);
                case "case_count" -> count = p.getValueAsLong(-1);
                default -> p.skipChildren();
            }
        }
        require(key, childKey != null && sha != null, "an entry lacks key or sha256");
        return new IndexEntry(new ObjectRef(ObjectKey.of(childKey), length, Sha256.parseHex(sha)), first, count);
    }

    private static void require(ObjectKey key, boolean condition, String problem) {
        if (!condition) {
            throw new DatasetDamagedException(key, problem);
        }
    }
}
