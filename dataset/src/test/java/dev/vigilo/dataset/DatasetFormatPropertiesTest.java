package dev.vigilo.dataset;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.vigilo.storage.ObjectKey;
import dev.vigilo.storage.Sha256;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;

/** Properties of the pieces an upload is made of, over generated inputs. */
class DatasetFormatPropertiesTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    /** Valid case lines with arbitrary unicode ids and nested inputs. */
    @Provide
    Arbitrary<List<String>> caseLines() {
        Arbitrary<String> text = Arbitraries.strings()
                .all()
                .ofMinLength(1)
                .ofMaxLength(30)
                .filter(DatasetFormatPropertiesTest::isWellFormed);
        return text.set()
                .ofMinSize(1)
                .ofMaxSize(40)
                .flatMap(ids -> text.list().ofSize(ids.size()).map(inputs -> {
                    List<String> lines = new ArrayList<>();
                    int i = 0;
                    for (String id : ids) {
                        ObjectNode c = JSON.createObjectNode();
                        c.put("id", id);
                        c.putObject("input")
                                .put("text", inputs.get(i))
                                .putArray("n")
                                .add(i)
                                .add(-i * 0.5);
                        if (i % 2 == 0) {
                            c.put("group", inputs.get(i));
                            c.putArray("tags").add(id).add("t");
                        }
                        lines.add(c.toString());
                        i++;
                    }
                    return lines;
                }));
    }

    private static boolean isWellFormed(String s) {
        return StandardCharsets.UTF_8.newEncoder().canEncode(s);
    }

    @Property(tries = 200)
    void caseFilesRoundTripWithVerifiedHashes(
            @ForAll("caseLines") List<String> lines, @ForAll @IntRange(min = 0, max = 1000) int firstOrdinal) {
        CaseLineParser parser = new CaseLineParser(DatasetLimits.MAX_CASE_BYTES);
        CaseFileFormat.Builder builder = new CaseFileFormat.Builder();
        for (int i = 0; i < lines.size(); i++) {
            byte[] bytes = lines.get(i).getBytes(StandardCharsets.UTF_8);
            String id = parse(parser, bytes).id();
            builder.add(firstOrdinal + i, id, Sha256.of(bytes), bytes, bytes.length);
        }
        byte[] file = builder.encode();
        List<StoredCase> decoded = CaseFileFormat.decode(ObjectKey.of("k"), file, firstOrdinal, lines.size(), parser);
        assertThat(decoded).hasSize(lines.size());
        for (int i = 0; i < lines.size(); i++) {
            StoredCase c = decoded.get(i);
            assertThat(c.ordinal()).isEqualTo(firstOrdinal + i);
            assertThat(new String(c.caseJson(), StandardCharsets.UTF_8)).isEqualTo(lines.get(i));
            assertThat(c.id())
                    .isEqualTo(parse(parser, lines.get(i).getBytes(StandardCharsets.UTF_8))
                            .id());
        }
    }

    /** Bytes that change a case file's structure when put somewhere: JSON punctuation, escapes, UTF-8 pieces. */
    private static final byte[] EDITS = "{}[]\":, \n\r\t\\0aAé".getBytes(StandardCharsets.UTF_8);

    /**
     * The one-pass decoding accepts exactly what the line by line decoding accepts, with the same cases, and gives
     * the same error otherwise: over valid files, files whose cases were edited before they were hashed (invalid
     * cases with correct hashes, ids that differ from the record's), and files edited after encoding.
     */
    @Property(tries = 300)
    void aCaseFileDecodesInOnePassExactlyAsLineByLine(
            @ForAll("caseLines") List<String> lines,
            @ForAll @IntRange(min = 0, max = 1000) int firstOrdinal,
            @ForAll @IntRange(min = 0, max = 2) int caseEdits,
            @ForAll boolean editFile,
            @ForAll long seed) {
        java.util.Random random = new java.util.Random(seed);
        CaseLineParser parser = new CaseLineParser(DatasetLimits.MAX_CASE_BYTES);
        CaseFileFormat.Builder builder = new CaseFileFormat.Builder();
        for (int i = 0; i < lines.size(); i++) {
            byte[] bytes = lines.get(i).getBytes(StandardCharsets.UTF_8);
            String id = parse(parser, bytes).id();
            if (random.nextInt(lines.size()) < caseEdits) {
                bytes = edit(bytes, random);
                id = random.nextInt(4) == 0 ? id + "x" : id;
            }
            builder.add(firstOrdinal + i, id, Sha256.of(bytes), bytes, bytes.length);
        }
        byte[] file = editFile ? edit(builder.encode(), random) : builder.encode();
        CaseFileDecoder decoder = new CaseFileDecoder(parser);
        List<StoredCase> onePass = decoder.decodeInOnePass(file, firstOrdinal, lines.size());
        List<StoredCase> reference;
        try {
            reference = CaseFileFormat.decode(ObjectKey.of("k"), file, firstOrdinal, lines.size(), parser);
        } catch (DatasetDamagedException e) {
            assertThat(onePass).isNull();
            assertThatThrownBy(() -> decoder.decode(ObjectKey.of("k"), file, firstOrdinal, lines.size()))
                    .isInstanceOf(DatasetDamagedException.class)
                    .hasMessage(e.getMessage());
            return;
        }
        if (caseEdits == 0 && !editFile) {
            assertThat(onePass).isNotNull();
        }
        for (List<StoredCase> decoded : List.of(
                onePass == null ? reference : onePass,
                decoder.decode(ObjectKey.of("k"), file, firstOrdinal, lines.size()))) {
            assertThat(decoded).hasSameSizeAs(reference);
            for (int i = 0; i < reference.size(); i++) {
                StoredCase a = decoded.get(i);
                StoredCase b = reference.get(i);
                assertThat(a.ordinal()).isEqualTo(b.ordinal());
                assertThat(a.fields()).isEqualTo(b.fields());
                assertThat(a.sha256()).isEqualTo(b.sha256());
                assertThat(a.caseJson()).isEqualTo(b.caseJson());
            }
        }
    }

    /** {@code bytes} with one byte replaced, inserted or removed at a random place. */
    private static byte[] edit(byte[] bytes, java.util.Random random) {
        int at = random.nextInt(bytes.length);
        byte b = EDITS[random.nextInt(EDITS.length)];
        ByteArrayOutputStream out = new ByteArrayOutputStream(bytes.length + 1);
        out.write(bytes, 0, at);
        switch (random.nextInt(3)) {
            case 0 -> out.write(b);
            case 1 -> {
                out.write(b);
                out.write(bytes[at]);
            }
            default -> {}
        }
        out.write(bytes, at + 1, bytes.length - at - 1);
        return out.toByteArray();
    }

    @Property(tries = 200)
    void sourceLinesSplitLikeAReferenceAndHashEveryByte(
            @ForAll @Size(max = 30) List<@net.jqwik.api.constraints.StringLength(max = 70000) String> parts,
            @ForAll boolean crlf,
            @ForAll boolean bom,
            @ForAll boolean trailingNewline)
            throws IOException {
        ByteArrayOutputStream raw = new ByteArrayOutputStream();
        if (bom) {
            raw.writeBytes(new byte[] {(byte) 0xEF, (byte) 0xBB, (byte) 0xBF});
        }
        for (int i = 0; i < parts.size(); i++) {
            raw.writeBytes(parts.get(i).getBytes(StandardCharsets.UTF_8));
            if (i < parts.size() - 1 || trailingNewline) {
                raw.writeBytes((crlf ? "\r\n" : "\n").getBytes(StandardCharsets.US_ASCII));
            }
        }
        byte[] bytes = raw.toByteArray();
        List<String> actual = new ArrayList<>();
        try (SourceLines lines = new SourceLines(new ByteArrayInputStream(bytes), 1 << 20)) {
            while (lines.next()) {
                actual.add(new String(lines.lineBytes(), 0, lines.lineLength(), StandardCharsets.UTF_8));
                assertThat(lines.lineNumber()).isEqualTo(actual.size());
            }
            assertThat(lines.sourceSha256()).isEqualTo(Sha256.of(bytes));
            assertThat(lines.bytesRead()).isEqualTo(bytes.length);
        }
        assertThat(actual).isEqualTo(referenceSplit(bytes));
    }

    @Property(tries = 200)
    void sourceBatchesCutWholeLinesLikeAReferenceAndHashEveryByte(
            @ForAll @Size(max = 30) List<@net.jqwik.api.constraints.StringLength(max = 3000) String> parts,
            @ForAll boolean crlf,
            @ForAll boolean bom,
            @ForAll boolean trailingNewline,
            @ForAll @IntRange(min = 1, max = 5000) int batchBytes)
            throws IOException {
        ByteArrayOutputStream raw = new ByteArrayOutputStream();
        if (bom) {
            raw.writeBytes(new byte[] {(byte) 0xEF, (byte) 0xBB, (byte) 0xBF});
        }
        for (int i = 0; i < parts.size(); i++) {
            raw.writeBytes(parts.get(i).replace('\n', ' ').getBytes(StandardCharsets.UTF_8));
            if (i < parts.size() - 1 || trailingNewline) {
                raw.writeBytes((crlf ? "\r\n" : "\n").getBytes(StandardCharsets.US_ASCII));
            }
        }
        byte[] bytes = raw.toByteArray();
        List<String> actual = new ArrayList<>();
        ByteArrayOutputStream rejoined = new ByteArrayOutputStream();
        try (SourceBatches batches = new SourceBatches(new ByteArrayInputStream(bytes), batchBytes, 1 << 20)) {
            SourceBatches.Batch batch;
            long expectedIndex = 0;
            while ((batch = batches.next()) != null) {
                assertThat(batch.index()).isEqualTo(expectedIndex++);
                assertThat(batch.length()).isPositive();
                rejoined.write(batch.bytes(), 0, batch.length());
                boolean last = rejoined.size() == bytes.length;
                if (!last) {
                    assertThat(batch.bytes()[batch.length() - 1])
                            .as("a batch ends a line")
                            .isEqualTo((byte) '\n');
                }
                BatchLines lines = new BatchLines(batch);
                int count = 0;
                while (lines.next()) {
                    actual.add(new String(batch.bytes(), lines.start(), lines.length(), StandardCharsets.UTF_8));
                    assertThat(lines.lineNumber()).isEqualTo(++count);
                }
            }
            assertThat(batches.sourceSha256()).isEqualTo(Sha256.of(bytes));
            assertThat(batches.bytesRead()).isEqualTo(bytes.length);
        }
        assertThat(rejoined.toByteArray()).isEqualTo(bytes);
        assertThat(actual).isEqualTo(referenceSplit(bytes));
    }

    @Property(tries = 100)
    void aLineLongerThanTheLimitFailsAfterTheBatchesBeforeIt(
            @ForAll @IntRange(min = 0, max = 20) int before,
            @ForAll @IntRange(min = 1, max = 3) int excess,
            @ForAll @IntRange(min = 1, max = 300) int batchBytes)
            throws IOException {
        int limit = 100;
        StringBuilder text = new StringBuilder();
        for (int i = 0; i < before; i++) {
            text.append("line ").append(i).append('\n');
        }
        text.append("x".repeat(limit + excess)).append(excess == 1 ? "" : "\n");
        byte[] bytes = text.toString().getBytes(StandardCharsets.US_ASCII);
        int lines = 0;
        try (SourceBatches batches = new SourceBatches(new ByteArrayInputStream(bytes), batchBytes, limit)) {
            if (excess == 1) {
                // limit + 1 bytes is the slack a CRLF line's \r may use: accepted.
                SourceBatches.Batch batch;
                while ((batch = batches.next()) != null) {
                    BatchLines cursor = new BatchLines(batch);
                    while (cursor.next()) {
                        lines++;
                    }
                }
                assertThat(lines).isEqualTo(before + 1);
                return;
            }
            try {
                SourceBatches.Batch batch;
                while ((batch = batches.next()) != null) {
                    BatchLines cursor = new BatchLines(batch);
                    while (cursor.next()) {
                        lines++;
                    }
                }
                throw new AssertionError("no error for a line of " + (limit + excess) + " bytes");
            } catch (SourceBatches.LineTooLongException e) {
                assertThat(lines)
                        .as("every line before the long one was returned")
                        .isEqualTo(before);
            }
        }
    }

    @Property(tries = 100)
    void aFoldOfBatchesEqualsTheFoldOfItsCasesOneByOne(
            @ForAll @Size(max = 50) List<@net.jqwik.api.constraints.StringLength(min = 1, max = 20) String> ids,
            @ForAll @IntRange(min = 1, max = 7) int batchSize) {
        CaseFold one = new CaseFold();
        CaseFold batched = new CaseFold();
        CaseFold.Batch batch = new CaseFold.Batch();
        for (int i = 0; i < ids.size(); i++) {
            Sha256 sha = Sha256.of(ids.get(i).getBytes(StandardCharsets.UTF_8));
            one.add(1000 + i, ids.get(i), sha);
            batch.add(1000 + i, ids.get(i), sha);
            if (batch.count() == batchSize) {
                batched.addAll(batch);
                batch = new CaseFold.Batch();
            }
        }
        batched.addAll(batch);
        assertThat(batched.cases()).isEqualTo(one.cases());
        assertThat(batched.finish()).isEqualTo(one.finish());
    }

    /** Lines as defined in docs/formats/dataset.md: split on LF, drop one CR before it, strip a leading BOM. */
    private static List<String> referenceSplit(byte[] bytes) {
        String text = new String(bytes, StandardCharsets.UTF_8);
        List<String> lines = new ArrayList<>(List.of(text.split("\n", -1)));
        if (text.isEmpty() || text.endsWith("\n")) {
            lines.remove(lines.size() - 1);
        }
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i);
            if (line.endsWith("\r")) {
                line = line.substring(0, line.length() - 1);
            }
            if (i == 0 && line.startsWith("\uFEFF")) {
                line = line.substring(1);
            }
            lines.set(i, line);
        }
        return lines;
    }

    private static CaseFields parse(CaseLineParser parser, byte[] bytes) {
        try {
            return parser.parse(bytes, bytes.length);
        } catch (CaseLineParser.CaseSyntaxException e) {
            throw new AssertionError(e);
        }
    }
}
