package dev.vigilo.dataset;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.base.ParserBase;
import dev.vigilo.storage.ObjectKey;
import dev.vigilo.storage.Sha256;
import java.io.IOException;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Decodes and checks whole case files like {@link CaseFileFormat#decode}, reading all records of a file through one
 * JSON parser: each record's fields and its case (every rule of the case shape) in the same pass, where the line by
 * line decoding parses each record and then its case again, with a parser for each.
 *
 * <p>The one pass accepts only files in the shape {@link CaseFileFormat} writes (the exact header, each record's
 * fields in their written order, one record per line) whose every check passes: the header's format, version, first
 * ordinal and count, each record's ordinal, the SHA-256 of each case's bytes, each case's validity (UTF-8 and
 * shape) and that its id equals the record's. Whatever it cannot accept, damage included, is decoded again line by
 * line, which gives the outcome and the message: both accept exactly the same files, with the same cases. Not
 * thread-safe (it reuses a parser's decoder and a digest).
 */
final class CaseFileDecoder {
    private final CaseLineParser caseParser;
    private final MessageDigest digest = Sha256.newDigest();
    private final byte[] recordSha = new byte[Sha256.LENGTH];

    CaseFileDecoder(CaseLineParser caseParser) {
        this.caseParser = caseParser;
    }

    /** This decoder's SHA-256 digest, for a caller on the decoder's thread between decodes (reset after each use). */
    MessageDigest digest() {
        return digest;
    }

    /**
     * Decodes and checks a whole case file.
     *
     * @param key                  the file's key, for error messages
     * @param expectedFirstOrdinal the ordinal the index says the file starts at
     * @param expectedCount        the case count the index gives
     * @throws DatasetDamagedException when anything disagrees
     */
    List<StoredCase> decode(ObjectKey key, byte[] bytes, long expectedFirstOrdinal, long expectedCount) {
        List<StoredCase> cases = decodeInOnePass(bytes, expectedFirstOrdinal, expectedCount);
        return cases != null
                ? cases
                : CaseFileFormat.decode(key, bytes, expectedFirstOrdinal, expectedCount, caseParser);
    }

    /** The file's cases when the one pass accepts the file, else null (decode it line by line). */
    List<StoredCase> decodeInOnePass(byte[] bytes, long expectedFirstOrdinal, long expectedCount) {
        if (expectedCount < 1 || expectedCount > DatasetLimits.CASE_FILE_MAX_CASES) {
            return null;
        }
        byte[] header = CaseFileFormat.header(expectedFirstOrdinal, (int) expectedCount);
        if (bytes.length <= header.length || !Arrays.equals(bytes, 0, header.length, header, 0, header.length)) {
            return null;
        }
        boolean ascii = CaseLineParser.isAscii(bytes, header.length, bytes.length);
        List<StoredCase> cases = new ArrayList<>((int) expectedCount);
        try (JsonParser p = caseParser.bufferParser(bytes, header.length, bytes.length)) {
            if (!(p instanceof ParserBase)) {
                return null;
            }
            ParserBase parser = (ParserBase) p;
            int start = header.length;
            long ordinal = expectedFirstOrdinal;
            while (start < bytes.length) {
                if (cases.size() == expectedCount) {
                    return null;
                }
                // The parser's rows count the lines from the first record's: record k is on row k + 1.
                StoredCase c = record(parser, header.length, bytes, start, cases.size() + 1, ordinal, ascii);
                if (c == null) {
                    return null;
                }
                cases.add(c);
                ordinal++;
                start = nextLineStart;
            }
        } catch (IOException | CaseLineParser.CaseSyntaxException e) {
            return null;
        }
        return cases.size() == expectedCount ? cases : null;
    }

    /** Where the line after the last record {@link #record} read starts. */
    private int nextLineStart;

    /**
     * Reads the record on the line that starts at {@code start}, the parser's row {@code row}:
     * {@code {"ordinal":N,"id":"...","sha256":"<hex>","case":{...}}} exactly, the parser's next token being its
     * opening brace, and a newline right after its closing brace. The parser counts every line ending it passes
     * outside strings (which hold none unescaped), so a record whose closing brace is on the row of its opening
     * brace lies within one line, as the line by line decoding would cut it. Null when it is not exactly that or
     * a check fails.
     */
    private StoredCase record(ParserBase p, int base, byte[] bytes, int start, int row, long ordinal, boolean ascii)
            throws IOException, CaseLineParser.CaseSyntaxException {
        if (p.nextToken() != JsonToken.START_OBJECT
                || CaseLineParser.tokenStart(p, base) != start
                || p.getTokenLineNr() != row) {
            return null;
        }
        if (!field(p, "ordinal", JsonToken.VALUE_NUMBER_INT)
                || p.getNumberType() == JsonParser.NumberType.BIG_INTEGER
                || p.getLongValue() != ordinal) {
            return null;
        }
        if (!field(p, "id", JsonToken.VALUE_STRING)) {
            return null;
        }
        String id = p.getText();
        if (!field(p, "sha256", JsonToken.VALUE_STRING) || !readHex(bytes, CaseLineParser.tokenStart(p, base))) {
            return null;
        }
        if (!field(p, "case", JsonToken.START_OBJECT)) {
            return null;
        }
        int caseStart = CaseLineParser.tokenStart(p, base);
        CaseFields fields = CaseLineParser.readCaseFields(p);
        int caseEnd = CaseLineParser.tokenStart(p, base) + 1;
        // The case is exactly the object from its brace to its closing brace, and the record closes right after it,
        // on the same line, which ends there.
        if (caseStart <= start
                || caseEnd <= caseStart
                || caseEnd + 1 >= bytes.length
                || bytes[caseStart] != '{'
                || bytes[caseEnd - 1] != '}'
                || p.nextToken() != JsonToken.END_OBJECT
                || CaseLineParser.tokenStart(p, base) != caseEnd
                || p.getTokenLineNr() != row
                || bytes[caseEnd + 1] != '\n') {
            return null;
        }
        int caseLength = caseEnd - caseStart;
        if (caseLength > caseParser.maxLineBytes() || !fields.id().equals(id)) {
            return null;
        }
        if (!ascii) {
            caseParser.checkUtf8(bytes, caseStart, caseLength);
        }
        digest.update(bytes, caseStart, caseLength);
        byte[] actual = digest.digest();
        if (!Arrays.equals(actual, recordSha)) {
            return null;
        }
        nextLineStart = caseEnd + 2;
        return new StoredCase(ordinal, fields, Sha256.ofDigest(actual), Arrays.copyOfRange(bytes, caseStart, caseEnd));
    }

    /** Reads the next field: true when it is named {@code name} and its value's token is {@code value}. */
    private static boolean field(JsonParser p, String name, JsonToken value) throws IOException {
        return p.nextToken() == JsonToken.FIELD_NAME && name.equals(p.currentName()) && p.nextToken() == value;
    }

    /**
     * Reads the string whose opening quote is at {@code quote} as a lower-case hex SHA-256 into {@link #recordSha},
     * straight from the bytes: 64 hex digits and the closing quote (hex digits need no escapes, so these bytes are
     * the string). False when it is not one.
     */
    private boolean readHex(byte[] bytes, int quote) {
        int end = quote + 1 + 2 * Sha256.LENGTH;
        if (quote < 0 || end >= bytes.length || bytes[quote] != '"' || bytes[end] != '"') {
            return false;
        }
        for (int i = 0; i < Sha256.LENGTH; i++) {
            int hi = hexDigit(bytes[quote + 1 + 2 * i]);
            int lo = hexDigit(bytes[quote + 2 + 2 * i]);
            if (hi < 0 || lo < 0) {
                return false;
            }
            recordSha[i] = (byte) ((hi << 4) | lo);
        }
        return true;
    }

    /** The value of a lower-case hex digit (the only spelling the line by line decoding accepts), else -1. */
    private static int hexDigit(byte c) {
        if (c >= '0' && c <= '9') {
            return c - '0';
        }
        if (c >= 'a' && c <= 'f') {
            return c - 'a' + 10;
        }
        return -1;
    }
}
