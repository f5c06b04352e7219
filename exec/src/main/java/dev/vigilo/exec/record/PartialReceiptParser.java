package dev.vigilo.exec.record;

import static dev.vigilo.exec.record.JsonFields.array;
import static dev.vigilo.exec.record.JsonFields.intValue;
import static dev.vigilo.exec.record.JsonFields.longValue;
import static dev.vigilo.exec.record.JsonFields.optionalObject;
import static dev.vigilo.exec.record.JsonFields.putRef;
import static dev.vigilo.exec.record.JsonFields.sha256;
import static dev.vigilo.exec.record.JsonFields.text;
import static dev.vigilo.exec.record.JsonFields.uuid;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.util.RawValue;
import dev.vigilo.common.errors.DamagedException;
import dev.vigilo.common.json.StrictJson;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The one writer and reader of format {@code vigilo.exec.partial-receipt} (docs/formats/exec-partial-receipt.md),
 * strict like {@link ReceiptParser}: a key given twice, a missing or mistyped field, or a version this build does not
 * read is damage. The case entries are written in the version 7 receipt's case format ({@link
 * ReceiptParser#caseBytes(Receipt.CaseResult)}), so a final receipt's carried entry can be compared with its partial's byte for byte.
 */
public final class PartialReceiptParser {
    private PartialReceiptParser() {}

    static final String FORMAT = "vigilo.exec.partial-receipt";

    /** The versions this build reads; the last is the one it writes. */
    enum Version {
        /** The first partial receipt: the chunk's identity, the previous link and case entries. */
        V1(1),
        /**
         * Version 1 whose case entries' transcript references may be slices of transcript containers ({@code
         * offset}, as in receipt version 8). Written when an entry references a slice; otherwise version 1, byte for
         * byte.
         */
        V2(2);

        final int number;

        Version(int number) {
            this.number = number;
        }
    }

    static final String SETTLEMENT_GENERATION = "settlement_generation";
    static final String SEQUENCE = "sequence";
    static final String WRITTEN_AT = "written_at";

    private static final ObjectMapper MAPPER = StrictJson.newMapper();

    /**
     * A partial receipt read back, with each case entry's bytes as written (compact JSON), in entry order: what a
     * carried entry of a version 7 receipt must equal.
     */
    public record Read(PartialReceipt receipt, List<byte[]> entryBytes) {
        public Read {
            entryBytes = List.copyOf(entryBytes);
        }
    }

    /** The partial receipt as compact JSON in the documented key order, ending in a newline. */
    public static byte[] toJson(PartialReceipt p) {
        boolean slices = p.cases().stream().anyMatch(ReceiptParser.Version::hasSlice);
        ObjectNode n = JsonFields.document(FORMAT, (slices ? Version.V2 : Version.V1).number);
        n.put(ReceiptParser.RUN_ID, p.runId().toString());
        n.put(ReceiptParser.CHUNK_INDEX, p.chunkIndex());
        n.put(ReceiptParser.CHUNK_ID, p.chunkId().toString());
        n.put(ReceiptParser.SHARD, p.shard());
        n.put(ReceiptParser.LEASE_GENERATION, p.leaseGeneration());
        n.put(ReceiptParser.WORKER, p.worker().toString());
        n.put(ReceiptParser.MEMBERSHIP_SHA256, p.membership().toHex());
        n.put(SETTLEMENT_GENERATION, p.settlementGeneration());
        n.put(ReceiptParser.EPOCHS, p.epochs());
        n.put(SEQUENCE, p.sequence());
        if (p.previous().isPresent()) {
            putRef(n.putObject(ReceiptParser.PREVIOUS), p.previous().get());
        } else {
            n.putNull(ReceiptParser.PREVIOUS);
        }
        n.put(WRITTEN_AT, p.writtenAt().toString());
        ArrayNode cases = n.putArray(ReceiptParser.CASES);
        // Each entry is written as the bytes a receipt's case entry has (ReceiptParser.caseBytes, streamed), not
        // as a node tree built only to be serialized.
        p.cases()
                .forEach(c -> cases.addRawValue(
                        new RawValue(new String(ReceiptParser.caseBytes(c), StandardCharsets.UTF_8))));
        try {
            byte[] json = MAPPER.writeValueAsBytes(n);
            byte[] out = Arrays.copyOf(json, json.length + 1);
            out[json.length] = '\n';
            return out;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Reads a partial receipt of a version this build reads.
     *
     * @param where names it for messages (its key)
     * @throws DamagedException on any format problem, and on a version this build does not read
     */
    public static Read fromJson(byte[] bytes, String where) {
        try {
            JsonNode n = MAPPER.readTree(bytes);
            Version version = JsonFields.header(n, FORMAT, Version.values(), v -> v.number);
            int epochs = intValue(n, ReceiptParser.EPOCHS, "");
            if (epochs < 1 || epochs > 100) {
                throw new DamagedException("epochs " + epochs + " is not 1..100");
            }
            List<Receipt.CaseResult> cases = new ArrayList<>();
            List<byte[]> raw = new ArrayList<>();
            for (JsonNode c : array(n, ReceiptParser.CASES, "")) {
                cases.add(ReceiptParser.readCaseEntry(c, epochs, version == Version.V2));
                raw.add(ReceiptParser.caseBytes(c));
            }
            PartialReceipt p = new PartialReceipt(
                    uuid(n, ReceiptParser.RUN_ID, ""),
                    longValue(n, ReceiptParser.CHUNK_INDEX, ""),
                    uuid(n, ReceiptParser.CHUNK_ID, ""),
                    intValue(n, ReceiptParser.SHARD, ""),
                    longValue(n, ReceiptParser.LEASE_GENERATION, ""),
                    uuid(n, ReceiptParser.WORKER, ""),
                    sha256(n, ReceiptParser.MEMBERSHIP_SHA256, ""),
                    intValue(n, SETTLEMENT_GENERATION, ""),
                    epochs,
                    intValue(n, SEQUENCE, ""),
                    optionalObject(n, ReceiptParser.PREVIOUS, "").map(o -> JsonFields.ref(o, ReceiptParser.PREVIOUS)),
                    Instant.parse(text(n, WRITTEN_AT, "")),
                    cases);
            return new Read(p, raw);
        } catch (IOException | RuntimeException e) {
            throw new DamagedException("partial receipt " + where + " is invalid: " + e.getMessage(), e);
        }
    }
}
