package dev.vigilo.dataset;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.vigilo.storage.ObjectStore;
import dev.vigilo.storage.ObjectStores;
import dev.vigilo.storage.Sha256;
import dev.vigilo.storage.StoreSpec;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

/**
 * The upload's two passes against a sequential reference: the shared-parser validation accepts exactly the lines a
 * parser of one line accepts, and the pipelined store pass writes exactly the case files, index and fold that
 * encoding the lines one by one gives, whatever the batch size and layout.
 */
class UploadPassesPropertiesTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    /** Ids that exercise every id path: plain ASCII, escapes, quotes, non-ASCII, control characters. */
    @Provide
    Arbitrary<String> ids() {
        return Arbitraries.oneOf(
                Arbitraries.strings()
                        .alpha()
                        .numeric()
                        .withChars("-_.:/")
                        .ofMinLength(1)
                        .ofMaxLength(12),
                Arbitraries.strings()
                        .all()
                        .ofMinLength(1)
                        .ofMaxLength(8)
                        .filter(s -> StandardCharsets.UTF_8.newEncoder().canEncode(s)),
                Arbitraries.of("a\"b", "back\\slash", "tab\tid", "caf\u00e9", "\uD83D\uDE00", "x\u2028y", "\u0001"));
    }

    /** A valid case line in one of several spellings (id first or not, whitespace, escaped id). */
    @Provide
    Arbitrary<String> validLines() {
        return validLineParts().map(p -> validLine(p.get1(), p.get2(), p.get3()));
    }

    private Arbitrary<net.jqwik.api.Tuple.Tuple3<String, Integer, Integer>> validLineParts() {
        return Combinators.combine(
                        ids(),
                        Arbitraries.integers().between(0, 6),
                        Arbitraries.integers().between(0, 300))
                .as(net.jqwik.api.Tuple::of);
    }

    private static String validLine(String id, int shape, int inputLength) {
        String quotedId = quote(id);
        String input = "{\"text\":" + quote("y".repeat(inputLength)) + ",\"n\":[1,{\"k\":null}]}";
        return switch (shape) {
            case 0 -> "{\"id\":" + quotedId + ",\"input\":" + input + "}";
            case 1 -> "{\"input\":" + input + ",\"id\":" + quotedId + ",\"group\":\"g\"}";
            case 2 -> "  { \"id\" : " + quotedId + " , \"input\" : " + input + " }\t ";
            case 3 -> "{\"id\":" + quotedId + ",\"input\":1,\"tags\":[\"a\",\"b\"],\"metadata\":{}}";
            case 4 -> "{\"id\":" + escapeAll(id) + ",\"input\":null}";
            case 5 -> "{\"id\":" + quotedId + ",\"expected\":[1],\"input\":\"\"}";
            default -> "{\"id\":" + quotedId + ",\"input\":" + input + ",\"group\":\"x\",\"tags\":[]}";
        };
    }

    /** Lines a case file must reject, or that only a parser of the line alone judges correctly. */
    @Provide
    Arbitrary<String> trickyLines() {
        return Arbitraries.of(
                "{\"id\":\"a\",\"input\":1} {\"id\":\"b\",\"input\":2}",
                "{\"id\":\"a\",\"input\":1}{\"id\":\"b\",\"input\":2}",
                "{\"id\":\"a\",\"input\":1} x",
                "{\"id\":\"a\",\"input\":1} 7",
                "[1,2]",
                "\"text\"",
                "{\"input\":1}",
                "{\"id\":\"\",\"input\":1}",
                "{\"id\":7,\"input\":1}",
                "{\"id\":\"a\"}",
                "{\"id\":\"a\",\"id\":\"b\",\"input\":1}",
                "{\"id\":\"a\",\"input\":1,\"other\":1}",
                "{\"id\":\"a\",\"input\":1,\"tags\":[1]}",
                "{\"id\":\"a\",",
                "\"input\":1}",
                "{\"id\":\"a\",\r\"input\":1}",
                "\uFEFF{\"id\":\"bom\",\"input\":1}",
                "{\"id\":\"a\",\"input\":1} // comment",
                "{\"id\":\"a\",\"input\":1}}",
                "}",
                "{\"id\":\"caf\u00e9\",\"input\":\"\u00e9\"}",
                "   ",
                "");
    }

    @Property(tries = 300)
    void theSharedParserAcceptsExactlyWhatALineByItselfAccepts(
            @ForAll("mixedLines") List<String> lines, @ForAll boolean crlf) {
        byte[] buffer = join(lines, crlf, true);
        CaseLineParser parser = new CaseLineParser(DatasetLimits.MAX_CASE_BYTES);
        BatchLines cursor = new BatchLines(new SourceBatches.Batch(0, buffer, buffer.length));
        try (CaseLineParser.Lines shared = parser.lines(buffer, buffer.length)) {
            while (cursor.next()) {
                if (cursor.isBlank()) {
                    continue;
                }
                Optional<String> alone = idAlone(parser, buffer, cursor.start(), cursor.length());
                if (shared.judge(cursor.start(), cursor.end())) {
                    String id = shared.idText() != null
                            ? shared.idText()
                            : new String(buffer, shared.idStart(), shared.idLength(), StandardCharsets.UTF_8);
                    assertThat(alone).as("line %d", cursor.lineNumber()).contains(id);
                }
            }
        }
    }

    @Property(tries = 100)
    void linesOfPlainCasesAreAllJudgedByTheSharedParser(@ForAll("validLineLists") List<String> lines) {
        List<String> plain = lines.stream()
                .filter(l -> !l.contains("\\")
                        && StandardCharsets.US_ASCII.newEncoder().canEncode(l))
                .toList();
        byte[] buffer = join(plain, false, true);
        CaseLineParser parser = new CaseLineParser(DatasetLimits.MAX_CASE_BYTES);
        BatchLines cursor = new BatchLines(new SourceBatches.Batch(0, buffer, buffer.length));
        try (CaseLineParser.Lines shared = parser.lines(buffer, buffer.length)) {
            while (cursor.next()) {
                assertThat(shared.judge(cursor.start(), cursor.end()))
                        .as("line %d", cursor.lineNumber())
                        .isTrue();
            }
        }
    }

    @Provide
    Arbitrary<List<String>> validLineLists() {
        return validLines().list().ofMaxSize(30);
    }

    @Provide
    Arbitrary<List<String>> mixedLines() {
        return Arbitraries.frequencyOf(
                        net.jqwik.api.Tuple.of(3, validLines()), net.jqwik.api.Tuple.of(1, trickyLines()))
                .list()
                .ofMaxSize(30);
    }

    @Provide
    Arbitrary<List<String>> uniqueCases() {
        return validLineParts().list().ofMinSize(1).ofMaxSize(60).map(parts -> {
            List<String> lines = new ArrayList<>();
            for (int i = 0; i < parts.size(); i++) {
                var p = parts.get(i);
                lines.add(validLine(p.get1() + "#" + i, p.get2(), p.get3()));
            }
            return lines;
        });
    }

    @Property(tries = 60)
    void thePipelinedPassesStoreWhatEncodingTheLinesOneByOneStores(
            @ForAll("uniqueCases") List<String> lines,
            @ForAll boolean crlf,
            @ForAll boolean bom,
            @ForAll @IntRange(min = 1, max = 6) int blankEvery,
            @ForAll @IntRange(min = 16, max = 4096) int batchBytes,
            @ForAll @IntRange(min = 1, max = 12) int caseFileMaxCases,
            @ForAll @IntRange(min = 100, max = 6000) int caseFileTargetBytes,
            @ForAll @IntRange(min = 2, max = 5) int indexMaxEntries)
            throws IOException {
        ByteArrayOutputStream file = new ByteArrayOutputStream();
        if (bom) {
            file.writeBytes(new byte[] {(byte) 0xEF, (byte) 0xBB, (byte) 0xBF});
        }
        List<String> withBlanks = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            withBlanks.add(lines.get(i));
            if (i % blankEvery == 0) {
                withBlanks.add(" \t");
            }
        }
        file.writeBytes(join(withBlanks, crlf, lines.size() % 2 == 0));
        byte[] bytes = file.toByteArray();
        UploadLayout layout = new UploadLayout(caseFileMaxCases, caseFileTargetBytes, indexMaxEntries);
        Path dir = Files.createTempDirectory("vigilo-passes-");
        try (ObjectStore piped = ObjectStores.open(new StoreSpec.Local("piped", dir.resolve("piped")));
                ObjectStore reference = ObjectStores.open(new StoreSpec.Local("reference", dir.resolve("reference")))) {
            Stored expected = sequential(bytes, layout, reference);
            Stored actual = pipelined(dir.resolve("cases.jsonl"), bytes, batchBytes, layout, piped);
            assertThat(actual).isEqualTo(expected);
            assertThat(piped.list("", soon()))
                    .extracting(i -> i.key().value())
                    .containsExactlyElementsOf(reference.list("", soon()).stream()
                            .map(i -> i.key().value())
                            .toList());
        } finally {
            deleteTree(dir);
        }
    }

    @Test
    void aFileThatChangedBetweenThePassesFailsTheStorePass() throws IOException {
        Path dir = Files.createTempDirectory("vigilo-passes-");
        try (ObjectStore store = ObjectStores.open(new StoreSpec.Local("s", dir.resolve("s")))) {
            Path file = dir.resolve("cases.jsonl");
            Files.write(file, join(List.of("{\"id\":\"a\",\"input\":1}", "{\"id\":\"b\",\"input\":2}"), false, true));
            ValidationPass.Result validated;
            try (DuplicateIdDetector ids = new DuplicateIdDetector(16);
                    SourceBatches source = new SourceBatches(Files.newInputStream(file), 8, 1 << 20)) {
                validated = new ValidationPass(file, Files.size(file), UploadProgress.NONE, ids).run(source);
            }
            Files.write(file, join(List.of("{\"id\":\"a\",\"input\":1}", "{\"id\":\"c\",\"input\":2}"), false, true));
            try (ObjectWriter writer = new ObjectWriter(store, 2);
                    SourceBatches source = new SourceBatches(Files.newInputStream(file), 8, 1 << 20)) {
                IndexBuilder index = new IndexBuilder(writer, 4);
                StorePass pass = new StorePass(
                        file, Files.size(file), UploadProgress.NONE, UploadLayout.DEFAULT, validated, writer, index);
                assertThatThrownBy(() -> pass.run(source))
                        .isInstanceOf(InvalidDatasetException.class)
                        .hasMessageContaining("the file changed while it was being uploaded");
            }
        } finally {
            deleteTree(dir);
        }
    }

    private record Stored(IndexBuilder.Root root, Sha256 fold, long cases, Sha256 source) {}

    /** The reference: every line parsed by itself and added to the case file, one after the other. */
    private static Stored sequential(byte[] bytes, UploadLayout layout, ObjectStore store) throws IOException {
        CaseLineParser parser = new CaseLineParser(DatasetLimits.MAX_CASE_BYTES);
        CaseFold fold = new CaseFold();
        CaseFileFormat.Builder caseFile = new CaseFileFormat.Builder();
        long ordinal = 0;
        try (ObjectWriter writer = new ObjectWriter(store, 1);
                SourceLines lines = new SourceLines(new ByteArrayInputStream(bytes), DatasetLimits.MAX_CASE_BYTES)) {
            IndexBuilder index = new IndexBuilder(writer, layout.indexMaxEntries());
            while (lines.next()) {
                if (lines.lineIsBlank()) {
                    continue;
                }
                String id;
                try {
                    id = parser.parse(lines.lineBytes(), lines.lineLength()).id();
                } catch (CaseLineParser.CaseSyntaxException e) {
                    throw new AssertionError(e);
                }
                Sha256 sha = Sha256.of(lines.lineBytes(), 0, lines.lineLength());
                if (!caseFile.isEmpty()
                        && (caseFile.count() == layout.caseFileMaxCases()
                                || caseFile.recordBytes() + lines.lineLength() + 160 + id.length() * 6
                                        > layout.caseFileTargetBytes())) {
                    flush(caseFile, writer, index);
                }
                caseFile.add(ordinal, id, sha, lines.lineBytes(), lines.lineLength());
                fold.add(ordinal, id, sha);
                ordinal++;
            }
            flush(caseFile, writer, index);
            IndexBuilder.Root root = index.finish();
            writer.awaitAll();
            return new Stored(root, fold.finish(), ordinal, lines.sourceSha256());
        }
    }

    private static void flush(CaseFileFormat.Builder caseFile, ObjectWriter writer, IndexBuilder index) {
        if (caseFile.isEmpty()) {
            return;
        }
        byte[] encoded = caseFile.encode();
        index.addCaseFile(
                ObjectWriter.join(writer.submit(DatasetKeys.caseFile(Sha256.of(encoded)), encoded)),
                caseFile.firstOrdinal(),
                caseFile.count());
        caseFile.reset();
    }

    private static Stored pipelined(Path file, byte[] bytes, int batchBytes, UploadLayout layout, ObjectStore store)
            throws IOException {
        Files.write(file, bytes);
        ValidationPass.Result validated;
        try (DuplicateIdDetector ids = new DuplicateIdDetector(64);
                SourceBatches source =
                        new SourceBatches(Files.newInputStream(file), batchBytes, DatasetLimits.MAX_CASE_BYTES)) {
            validated = new ValidationPass(file, bytes.length, UploadProgress.NONE, ids).run(source);
            assertThat(ids.repeatedFingerprints()).isEmpty();
        }
        try (ObjectWriter writer = new ObjectWriter(store, 3);
                SourceBatches source =
                        new SourceBatches(Files.newInputStream(file), batchBytes, DatasetLimits.MAX_CASE_BYTES)) {
            IndexBuilder index = new IndexBuilder(writer, layout.indexMaxEntries());
            Sha256 fold = new StorePass(file, bytes.length, UploadProgress.NONE, layout, validated, writer, index)
                    .run(source);
            IndexBuilder.Root root = index.finish();
            writer.awaitAll();
            return new Stored(root, fold, validated.cases(), validated.sourceSha256());
        }
    }

    private static Optional<String> idAlone(CaseLineParser parser, byte[] buffer, int start, int length) {
        try {
            return Optional.of(parser.parse(buffer, start, length).id());
        } catch (CaseLineParser.CaseSyntaxException e) {
            return Optional.empty();
        }
    }

    private static byte[] join(List<String> lines, boolean crlf, boolean trailingNewline) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (int i = 0; i < lines.size(); i++) {
            out.writeBytes(lines.get(i).getBytes(StandardCharsets.UTF_8));
            if (i < lines.size() - 1 || trailingNewline) {
                out.writeBytes((crlf ? "\r\n" : "\n").getBytes(StandardCharsets.US_ASCII));
            }
        }
        return out.toByteArray();
    }

    private static String quote(String s) {
        try {
            return JSON.writeValueAsString(s);
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    /** The id as a JSON string with every character escaped as {@code \\uXXXX}. */
    private static String escapeAll(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            b.append(String.format("\\u%04x", (int) c));
        }
        return b.append('"').toString();
    }

    private static void deleteTree(Path root) throws IOException {
        try (Stream<Path> paths = Files.walk(root)) {
            for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }

    private static dev.vigilo.storage.Deadline soon() {
        return dev.vigilo.storage.Deadline.after(java.time.Duration.ofSeconds(30));
    }
}
