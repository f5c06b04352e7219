package dev.vigilo.dataset;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.io.JsonStringEncoder;
import dev.vigilo.storage.ObjectKey;
import dev.vigilo.storage.Sha256;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Encodes and decodes case files, format {@code vigilo.dataset.cases} version 1 (docs/formats/dataset.md).
 *
 * <p>A case file is UTF-8 JSON lines: a header line
 * {@code {"format":"vigilo.dataset.cases","version":1,"first_ordinal":N,"case_count":K}} and then K records
 * {@code {"ordinal":N,"id":"...","sha256":"<hex>","case":<the submitted case line, byte for byte>}}. The record's
 * {@code sha256} is the SHA-256 of exactly the bytes of {@code case}. Decoding checks the header, the count, the
 * ordinal sequence, each hash, and that the record id equals the case's own id.
 */
final class CaseFileFormat {
    static final String FORMAT = "vigilo.dataset.cases";
    static final int VERSION = 1;

    private static final byte[] RECORD_ORDINAL = "{\"ordinal\":".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] RECORD_ID = ",\"id\":\"".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] RECORD_SHA = "\",\"sha256\":\"".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] RECORD_CASE = "\",\"case\":".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] RECORD_END = "}\n".getBytes(StandardCharsets.US_ASCII);

    private CaseFileFormat() {}

    /**
     * Appends one record, {@code {"ordinal":N,"id":<quotedId>,"sha256":"<hex>","case":<case bytes>}} and its newline.
     *
     * @param quotedId the id as it appears between the quotes of a JSON string ({@link JsonStringEncoder}'s
     *                 escaping)
     * @param sha256   the case's 32-byte SHA-256, at {@code shaOffset}
     */
    static void encodeRecord(
            GrowableBytes out,
            long ordinal,
            byte[] quotedId,
            int idOffset,
            int idLength,
            byte[] sha256,
            int shaOffset,
            byte[] caseBytes,
            int caseOffset,
            int caseLength) {
        out.put(RECORD_ORDINAL);
        out.putDecimal(ordinal);
        out.put(RECORD_ID);
        out.put(quotedId, idOffset, idLength);
        out.put(RECORD_SHA);
        out.putHex(sha256, shaOffset, Sha256.LENGTH);
        out.put(RECORD_CASE);
        out.put(caseBytes, caseOffset, caseLength);
        out.put(RECORD_END);
    }

    /** The header line of a file of {@code count} cases from {@code firstOrdinal}, its newline included. */
    static byte[] header(long firstOrdinal, int count) {
        return ("{\"format\":\"" + FORMAT + "\",\"version\":" + VERSION + ",\"first_ordinal\":" + firstOrdinal
                        + ",\"case_count\":" + count + "}\n")
                .getBytes(StandardCharsets.US_ASCII);
    }

    /** Accumulates the records of one case file in memory (bounded by the caller's size and count limits). */
    static final class Builder {
        private final GrowableBytes records = new GrowableBytes(1 << 16);
        private long firstOrdinal = -1;
        private int count;

        void add(long ordinal, String id, Sha256 sha256, byte[] caseBytes, int caseLength) {
            next(ordinal);
            byte[] quoted = JsonStringEncoder.getInstance().quoteAsUTF8(id);
            encodeRecord(records, ordinal, quoted, 0, quoted.length, sha256.toBytes(), 0, caseBytes, 0, caseLength);
            count++;
        }

        /** Adds one record {@link #encodeRecord} made for {@code ordinal}. */
        void addRecord(long ordinal, byte[] record, int offset, int length) {
            next(ordinal);
            records.put(record, offset, length);
            count++;
        }

        private void next(long ordinal) {
            if (firstOrdinal < 0) {
                firstOrdinal = ordinal;
            } else if (ordinal != firstOrdinal + count) {
                throw new IllegalArgumentException(
                        "ordinal " + ordinal + " does not follow " + (firstOrdinal + count - 1));
            }
        }

        /** Bytes the file would have if encoded now, excluding the short header. */
        long recordBytes() {
            return records.size();
        }

        int count() {
            return count;
        }

        long firstOrdinal() {
            return firstOrdinal;
        }

        boolean isEmpty() {
            return count == 0;
        }

        byte[] encode() {
            byte[] h = header(firstOrdinal, count);
            byte[] out = new byte[h.length + records.size()];
            System.arraycopy(h, 0, out, 0, h.length);
            System.arraycopy(records.array(), 0, out, h.length, records.size());
            return out;
        }

        void reset() {
            records.reset();
            firstOrdinal = -1;
            count = 0;
        }
    }

    /**
     * Decodes and checks a whole case file line by line: each record through a parser of its own, then its case
     * through the case parser ({@link CaseFileDecoder} reads a file in one pass and comes here for whatever it does
     * not accept, so the outcome and the messages are this method's).
     *
     * @param key                 the file's key, for error messages
     * @param expectedFirstOrdinal the ordinal the index says the file starts at
     * @param expectedCount       the case count the index gives
     * @throws DatasetDamagedException when anything disagrees
     */
    static List<StoredCase> decode(
            ObjectKey key, byte[] bytes, long expectedFirstOrdinal, long expectedCount, CaseLineParser caseParser) {
        List<StoredCase> cases = new ArrayList<>((int) Math.min(expectedCount, 4096));
        JsonFactory factory = Json.factory(bytes.length);
        int pos = 0;
        int lineNo = 0;
        long nextOrdinal = expectedFirstOrdinal;
        while (pos < bytes.length) {
            int end = pos;
            while (end < bytes.length && bytes[end] != '\n') {
                end++;
            }
            if (end == bytes.length) {
                throw new DatasetDamagedException(key, "the file does not end with a newline");
            }
            lineNo++;
            try {
                if (lineNo == 1) {
                    checkHeader(key, factory, bytes, pos, end - pos, expectedFirstOrdinal, expectedCount);
                } else {
                    cases.add(decodeRecord(key, factory, bytes, pos, end - pos, nextOrdinal, caseParser));
                    nextOrdinal++;
                }
            } catch (IOException e) {
                throw new DatasetDamagedException(key, "line " + lineNo + " is not valid JSON: " + e.getMessage(), e);
            }
            pos = end + 1;
        }
        if (lineNo == 0) {
            throw new DatasetDamagedException(key, "the file is empty");
        }
        if (cases.size() != expectedCount) {
            throw new DatasetDamagedException(key, "holds " + cases.size() + " cases, the index says " + expectedCount);
        }
        return cases;
    }

    private static void checkHeader(
            ObjectKey key,
            JsonFactory factory,
            byte[] bytes,
            int off,
            int len,
            long expectedFirstOrdinal,
            long expectedCount)
            throws IOException {
        try (JsonParser p = factory.createParser(bytes, off, len)) {
            expect(key, p.nextToken() == JsonToken.START_OBJECT, "the header is not an object");
            String format = null;
            long version = -1;
            long first = -1;
            long count = -1;
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String name = p.currentName();
                p.nextToken();
                switch (name) {
                    case "format" -> format = p.getValueAsString();
                    case "version" -> version = p.getValueAsLong(-1);
                    case "first_ordinal" -> first = p.getValueAsLong(-1);
                    case "case_count" -> count = p.getValueAsLong(-1);
                    default -> p.skipChildren();
                }
            }
            expect(key, FORMAT.equals(format), "the header's format is " + format + ", not " + FORMAT);
            expect(
                    key,
                    version == VERSION,
                    "case file version " + version + " is not supported (this build reads " + VERSION + ")");
            expect(
                    key,
                    first == expectedFirstOrdinal,
                    "starts at ordinal " + first + ", the index says " + expectedFirstOrdinal);
            expect(
                    key,
                    count == expectedCount,
                    "the header counts " + count + " cases, the index says " + expectedCount);
        }
    }

    private static StoredCase decodeRecord(
            ObjectKey key,
            JsonFactory factory,
            byte[] bytes,
            int off,
            int len,
            long expectedOrdinal,
            CaseLineParser caseParser)
            throws IOException {
        try (JsonParser p = factory.createParser(bytes, off, len)) {
            expect(key, p.nextToken() == JsonToken.START_OBJECT, "record " + expectedOrdinal + " is not an object");
            long ordinal = -1;
            String id = null;
            String sha = null;
            int caseStart = -1;
            int caseEnd = -1;
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String name = p.currentName();
                JsonToken value = p.nextToken();
                switch (name) {
                    case "ordinal" -> ordinal = p.getValueAsLong(-1);
                    case "id" -> id = p.getValueAsString();
                    case "sha256" -> sha = p.getValueAsString();
                    case "case" -> {
                        expect(
                                key,
                                value == JsonToken.START_OBJECT,
                                "record " + expectedOrdinal + ": case is not an object");
                        caseStart = (int) p.currentTokenLocation().getByteOffset();
                        p.skipChildren();
                        caseEnd = (int) p.currentLocation().getByteOffset();
                    }
                    default -> p.skipChildren();
                }
            }
            expect(
                    key,
                    ordinal == expectedOrdinal,
                    "record ordinal " + ordinal + " where " + expectedOrdinal + " belongs");
            expect(key, id != null && sha != null && caseStart >= 0, "record " + ordinal + " lacks id, sha256 or case");
            // Parser offsets are relative to the slice start.
            int absStart = off + caseStart;
            int caseLength = caseEnd - caseStart;
            Sha256 actual = Sha256.of(bytes, absStart, caseLength);
            if (!isHexOf(sha, actual.toBytes())) {
                throw new DatasetDamagedException(
                        key,
                        "case " + ordinal + " (\"" + id + "\") has SHA-256 " + actual.toHex() + ", its record says "
                                + sha);
            }
            CaseFields fields;
            try {
                fields = caseParser.parse(bytes, absStart, caseLength);
            } catch (CaseLineParser.CaseSyntaxException e) {
                throw new DatasetDamagedException(key, "case " + ordinal + " is not a valid case: " + e.getMessage());
            }
            byte[] caseBytes = java.util.Arrays.copyOfRange(bytes, absStart, absStart + caseLength);
            expect(
                    key,
                    fields.id().equals(id),
                    "record " + ordinal + " says id \"" + id + "\", the case says \"" + fields.id() + "\"");
            return new StoredCase(ordinal, fields, actual, caseBytes);
        }
    }

    /** True when {@code hex} is exactly the lower-case hex spelling of {@code digest} (compared without a string). */
    private static boolean isHexOf(String hex, byte[] digest) {
        if (hex.length() != 2 * digest.length) {
            return false;
        }
        for (int i = 0; i < digest.length; i++) {
            if (hex.charAt(2 * i) != HEX_DIGITS[(digest[i] >> 4) & 0xF]
                    || hex.charAt(2 * i + 1) != HEX_DIGITS[digest[i] & 0xF]) {
                return false;
            }
        }
        return true;
    }

    private static final char[] HEX_DIGITS = "0123456789abcdef".toCharArray();

    private static void expect(ObjectKey key, boolean condition, String problem) {
        if (!condition) {
            throw new DatasetDamagedException(key, problem);
        }
    }

    /** Shared parser settings for stored documents. */
    static final class Json {
        private Json() {}

        static JsonFactory factory(int maxBytes) {
            return JsonFactory.builder()
                    .streamReadConstraints(StreamReadConstraints.builder()
                            .maxStringLength(Math.max(maxBytes, 1 << 20))
                            .maxDocumentLength(Math.max(maxBytes, 1 << 20) + 1L)
                            .build())
                    .build();
        }
    }
}
