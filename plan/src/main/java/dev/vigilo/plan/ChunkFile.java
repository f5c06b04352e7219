package dev.vigilo.plan;

import com.fasterxml.jackson.core.JsonEncoding;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.io.SerializedString;
import com.fasterxml.jackson.core.util.ByteArrayBuilder;
import dev.vigilo.dataset.CaseFold;
import dev.vigilo.storage.Sha256;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * One execution chunk, format {@code vigilo.plan.chunk} version 1 (docs/formats/plan-chunk.md): at most
 * {@link PlanShape#CHUNK_CASES} consecutive cases with their ids, hashes and per-case evaluator/gate selection
 * masks, and the chunk's membership digest. Immutable.
 */
public record ChunkFile(
        UUID runId, long chunkIndex, UUID chunkId, int shard, long firstOrdinal, List<Entry> cases, Sha256 membership) {
    static final String FORMAT = "vigilo.plan.chunk";

    public ChunkFile {
        cases = List.copyOf(cases);
    }

    /** One case: which evaluators apply to it and which gates select it, as bit masks (bit i = index i). */
    public record Entry(long ordinal, String id, Sha256 sha256, long evaluators, long gates) {}

    static Sha256 membershipOf(List<Entry> cases) {
        CaseFold f = new CaseFold();
        for (Entry e : cases) {
            f.add(e.ordinal(), e.id(), e.sha256());
        }
        return f.finish();
    }

    /**
     * The file's bytes: the fields in the documented order, no whitespace, a trailing newline. Written with a
     * streaming generator (ten thousand chunk files per million cases), byte for byte what the plan's tree encoding
     * ({@link PlanJson#encode}) gives for the same fields: field names pre-encoded, and hex digests and masks
     * written as the raw UTF-8 of their characters, which need no escaping (lower-case hex digits only).
     */
    byte[] encode() {
        ByteArrayBuilder out = new ByteArrayBuilder(256 + 192 * cases.size());
        byte[] hex = new byte[2 * Sha256.LENGTH];
        try (JsonGenerator g = ProfileJson.MAPPER.createGenerator(out, JsonEncoding.UTF8)) {
            g.writeStartObject();
            g.writeStringField("format", FORMAT);
            g.writeNumberField("version", PlanLayout.FORMAT_VERSION);
            g.writeStringField("run_id", runId.toString());
            g.writeNumberField("chunk_index", chunkIndex);
            g.writeStringField("chunk_id", chunkId.toString());
            g.writeNumberField("shard", shard);
            g.writeNumberField("first_ordinal", firstOrdinal);
            g.writeNumberField("case_count", cases.size());
            g.writeFieldName(MEMBERSHIP);
            writeHex(g, membership, hex);
            g.writeArrayFieldStart("cases");
            for (Entry e : cases) {
                g.writeStartObject();
                g.writeFieldName(ORDINAL);
                g.writeNumber(e.ordinal());
                g.writeFieldName(ID);
                g.writeString(e.id());
                g.writeFieldName(SHA256);
                writeHex(g, e.sha256(), hex);
                g.writeFieldName(EVALUATORS);
                writeMask(g, e.evaluators(), hex);
                g.writeFieldName(GATES);
                writeMask(g, e.gates(), hex);
                g.writeEndObject();
            }
            g.writeEndArray();
            g.writeEndObject();
        } catch (IOException e) {
            throw new UncheckedIOException(e); // a generator over a byte buffer does no I/O
        }
        out.write('\n');
        return out.toByteArray();
    }

    private static final SerializedString MEMBERSHIP = new SerializedString("membership_sha256");
    private static final SerializedString ORDINAL = new SerializedString("ordinal");
    private static final SerializedString ID = new SerializedString("id");
    private static final SerializedString SHA256 = new SerializedString("sha256");
    private static final SerializedString EVALUATORS = new SerializedString("evaluators");
    private static final SerializedString GATES = new SerializedString("gates");
    private static final byte[] HEX_DIGITS = "0123456789abcdef".getBytes(StandardCharsets.US_ASCII);

    /** Writes {@code sha}'s lower-case hex spelling ({@link Sha256#toHex}) as a string value. */
    private static void writeHex(JsonGenerator g, Sha256 sha, byte[] scratch) throws IOException {
        byte[] digest = sha.toBytes();
        for (int i = 0; i < digest.length; i++) {
            scratch[2 * i] = HEX_DIGITS[(digest[i] >> 4) & 0xF];
            scratch[2 * i + 1] = HEX_DIGITS[digest[i] & 0xF];
        }
        g.writeRawUTF8String(scratch, 0, 2 * Sha256.LENGTH);
    }

    /** Writes {@code mask} as {@link Long#toHexString} spells it (unsigned, lower case, no leading zeros). */
    private static void writeMask(JsonGenerator g, long mask, byte[] scratch) throws IOException {
        int digits = Math.max(1, (Long.SIZE - Long.numberOfLeadingZeros(mask) + 3) / 4);
        for (int i = digits - 1; i >= 0; i--) {
            scratch[digits - 1 - i] = HEX_DIGITS[(int) (mask >>> (4 * i)) & 0xF];
        }
        g.writeRawUTF8String(scratch, 0, digits);
    }

    /**
     * Decodes and checks the header, the ordinal sequence, the shard, the chunk id and the membership digest. Reads
     * the document with a streaming parser (no tree is built: chunk files are read back at publication and by a
     * resume, ten thousand per million cases), then applies the same checks, in the same order and with the same
     * messages, as {@link PlanJson}'s tree helpers: fields may come in any order, a repeated field's last value counts,
     * unknown fields are ignored, and content after the document is ignored.
     */
    static ChunkFile decode(byte[] bytes) {
        Fields header = new Fields();
        List<Fields> entries = null;
        try (JsonParser p = ProfileJson.MAPPER.getFactory().createParser(bytes)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                throw new PlanJson.FormatException("not a JSON object");
            }
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String name = p.currentName();
                JsonToken value = p.nextToken();
                if (name.equals("cases")) {
                    entries = value == JsonToken.START_ARRAY ? readEntries(p) : null;
                    if (entries == null) {
                        p.skipChildren();
                    }
                } else {
                    header.read(name, p, value);
                }
            }
        } catch (IOException e) {
            throw new PlanJson.FormatException("not JSON: " + e.getMessage());
        }
        String format = header.text("format");
        if (!FORMAT.equals(format)) {
            throw new PlanJson.FormatException("format is \"" + format + "\", expected \"" + FORMAT + "\"");
        }
        long version = header.num("version");
        if (version > PlanLayout.FORMAT_VERSION) {
            throw new PlanJson.FormatException("version " + version + " is newer than this Vigilo reads ("
                    + PlanLayout.FORMAT_VERSION + "); upgrade Vigilo");
        }
        if (version != PlanLayout.FORMAT_VERSION) {
            throw new PlanJson.FormatException("unsupported version " + version);
        }
        UUID runId = header.uuid("run_id");
        long index = header.num("chunk_index");
        UUID chunkId = header.uuid("chunk_id");
        int shard = (int) header.num("shard");
        long first = header.num("first_ordinal");
        long count = header.num("case_count");
        Sha256 membership = header.sha("membership_sha256");
        PlanJson.expect(
                index >= 0 && shard == PlanShape.shardOf(index), "shard " + shard + " is not chunk index mod 128");
        PlanJson.expect(chunkId.equals(Fold.chunkId(runId, index)), "chunk_id does not derive from run id and index");
        if (entries == null) {
            throw new PlanJson.FormatException("field \"cases\" is missing or not a list");
        }
        PlanJson.expect(
                count >= 1 && count <= PlanShape.CHUNK_CASES && entries.size() == count,
                "case_count " + count + " does not match " + entries.size() + " entries (1.." + PlanShape.CHUNK_CASES
                        + ")");
        List<Entry> cases = new ArrayList<>(entries.size());
        for (int i = 0; i < entries.size(); i++) {
            Fields c = entries.get(i);
            long ordinal = c.num("ordinal");
            PlanJson.expect(
                    ordinal == first + i, "cases[" + i + "] has ordinal " + ordinal + ", expected " + (first + i));
            try {
                cases.add(new Entry(
                        ordinal,
                        c.text("id"),
                        c.sha("sha256"),
                        Long.parseUnsignedLong(c.text("evaluators"), 16),
                        Long.parseUnsignedLong(c.text("gates"), 16)));
            } catch (NumberFormatException e) {
                throw new PlanJson.FormatException("cases[" + i + "] has an invalid mask");
            }
        }
        PlanJson.expect(membershipOf(cases).equals(membership), "membership_sha256 does not match the cases");
        return new ChunkFile(runId, index, chunkId, shard, first, cases, membership);
    }

    /** The elements of the {@code cases} array; an element that is not an object has no fields. */
    private static List<Fields> readEntries(JsonParser p) throws IOException {
        List<Fields> entries = new ArrayList<>(PlanShape.CHUNK_CASES);
        JsonToken t;
        while ((t = p.nextToken()) != JsonToken.END_ARRAY) {
            Fields entry = new Fields();
            if (t == JsonToken.START_OBJECT) {
                while (p.nextToken() == JsonToken.FIELD_NAME) {
                    String name = p.currentName();
                    entry.read(name, p, p.nextToken());
                }
            } else {
                p.skipChildren();
            }
            entries.add(entry);
        }
        return entries;
    }

    /**
     * The scalar fields of one JSON object as a tree would hold them: a string, an integer (as {@code asLong} reads
     * it) or something else; the last of repeated fields counts.
     */
    private static final class Fields {
        private final java.util.Map<String, Object> values = new java.util.HashMap<>(8);

        void read(String name, JsonParser p, JsonToken value) throws IOException {
            switch (value) {
                case VALUE_STRING -> values.put(name, p.getText());
                case VALUE_NUMBER_INT ->
                    values.put(
                            name,
                            p.getNumberType() == JsonParser.NumberType.BIG_INTEGER
                                    ? p.getBigIntegerValue().longValue()
                                    : p.getLongValue());
                default -> {
                    values.put(name, Boolean.FALSE); // present, neither a string nor an integer
                    p.skipChildren();
                }
            }
        }

        String text(String field) {
            if (values.get(field) instanceof String s) {
                return s;
            }
            throw new PlanJson.FormatException("field \"" + field + "\" is missing or not a string");
        }

        long num(String field) {
            if (values.get(field) instanceof Long l) {
                return l;
            }
            throw new PlanJson.FormatException("field \"" + field + "\" is missing or not an integer");
        }

        UUID uuid(String field) {
            try {
                return UUID.fromString(text(field));
            } catch (IllegalArgumentException e) {
                throw new PlanJson.FormatException("field \"" + field + "\" is not a UUID");
            }
        }

        Sha256 sha(String field) {
            try {
                return Sha256.parseHex(text(field));
            } catch (IllegalArgumentException e) {
                throw new PlanJson.FormatException("field \"" + field + "\" is not a SHA-256 hex digest");
            }
        }
    }
}
