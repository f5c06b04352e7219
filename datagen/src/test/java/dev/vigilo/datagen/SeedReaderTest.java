package dev.vigilo.datagen;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.tuple;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SeedReaderTest {
    @TempDir
    Path dir;

    Path seeds(String text) throws Exception {
        return Files.writeString(dir.resolve("seeds.jsonl"), text);
    }

    @Test
    void readsSeedsInFileOrderWithIdsFromTheIdFieldOrTheLine() throws Exception {
        Path file = seeds("{\"id\": \"a\", \"x\": 1}\n\n   \n{\"id\": 7, \"__id\": \"kept\"}\n");
        assertThat(SeedReader.read(file, "id"))
                .extracting(SeedReader.Seed::id, s -> Json.canonical(s.fields()))
                .containsExactly(tuple("a", "{\"id\":\"a\",\"x\":1}"), tuple("7", "{\"__id\":\"kept\",\"id\":7}"));
        // Without id_field the id is item-<line> (blank lines count).
        assertThat(SeedReader.read(file, null)).extracting(SeedReader.Seed::id).containsExactly("item-1", "item-4");
    }

    @Test
    void invalidJsonIsReportedWithFileLineAndColumn() throws Exception {
        Path file = seeds("{\"id\": \"a\"}\n{\"id\": ]\n");
        assertThatThrownBy(() -> SeedReader.read(file, "id"))
                .isInstanceOf(PipelineDefinitionException.class)
                .hasMessageStartingWith(file + ":2:8: invalid JSON: ")
                .hasMessageEndingWith("; each line must be one JSON object")
                .satisfies(e -> {
                    PipelineDefinitionException p = (PipelineDefinitionException) e;
                    assertThat(p.line()).isEqualTo(2);
                    assertThat(p.column()).isEqualTo(8);
                });
    }

    @Test
    void aLineThatIsNotAnObjectIsAnError() throws Exception {
        Path file = seeds("{\"id\": \"a\"}\n[1, 2]\n");
        assertThatThrownBy(() -> SeedReader.read(file, "id"))
                .isInstanceOf(PipelineDefinitionException.class)
                .hasMessage(file + ":2:1: each line must be one JSON object");
    }

    @Test
    void aMissingEmptyOrNonScalarIdIsAnError() throws Exception {
        for (String bad : new String[] {"{\"x\": 1}", "{\"id\": \"\"}", "{\"id\": 1.5}", "{\"id\": [1]}"}) {
            Path file = seeds("{\"id\": \"a\"}\n\n" + bad + "\n");
            assertThatThrownBy(() -> SeedReader.read(file, "id"))
                    .as(bad)
                    .isInstanceOf(PipelineDefinitionException.class)
                    .hasMessage(file + ":3:1: seed has no string or integer 'id' (the pipeline's id_field)");
        }
    }

    @Test
    void duplicateIdsNameTheFirstLine() throws Exception {
        Path file = seeds("{\"id\": \"a\"}\n{\"id\": \"b\"}\n{\"id\": \"a\"}\n");
        assertThatThrownBy(() -> SeedReader.read(file, "id"))
                .isInstanceOf(PipelineDefinitionException.class)
                .hasMessage(file + ":3:1: duplicate item id 'a' (first on line 1)");
        // An integer id and the same digits as a string are one id.
        Path mixed = seeds("{\"id\": 5}\n{\"id\": \"5\"}\n");
        assertThatThrownBy(() -> SeedReader.read(mixed, "id"))
                .hasMessage(mixed + ":2:1: duplicate item id '5' (first on line 1)");
    }

    @Test
    void aMissingFileIsAnInputError() {
        Path file = dir.resolve("absent.jsonl");
        assertThatThrownBy(() -> SeedReader.read(file, "id"))
                .isInstanceOf(PipelineDefinitionException.class)
                .hasMessage(file + ":0:0: seed input does not exist; give the pipeline's input as a JSONL file");
    }

    @Test
    void invalidUtf8IsReportedAtItsLineAndByteAsDatasetUploadDoes() throws Exception {
        Path file = Files.write(
                dir.resolve("seeds.jsonl"),
                "{\"id\": \"a\"}\n{\"id\": \"b\u00e9\"}\n".getBytes(StandardCharsets.ISO_8859_1));
        assertThatThrownBy(() -> SeedReader.read(file, "id"))
                .isInstanceOf(PipelineDefinitionException.class)
                .hasMessage(file + ":2:10: bytes are not valid UTF-8 (byte 0xe9 at byte offset 9 of the line); save"
                        + " the seed input as UTF-8");
    }

    @Test
    void aSeedFileSavedAsUtf16SaysSoAndTheUtf8MarkIsSkipped() throws Exception {
        Path wide = Files.write(dir.resolve("wide.jsonl"), "{\"id\": \"a\"}\n".getBytes(StandardCharsets.UTF_16LE));
        byte[] marked = new byte[(int) Files.size(wide) + 2];
        marked[0] = (byte) 0xFF;
        marked[1] = (byte) 0xFE;
        System.arraycopy(Files.readAllBytes(wide), 0, marked, 2, marked.length - 2);
        Files.write(wide, marked);
        assertThatThrownBy(() -> SeedReader.read(wide, "id"))
                .isInstanceOf(PipelineDefinitionException.class)
                .hasMessage(wide + ":1:1: is UTF-16 (little-endian) text (it starts with the byte order mark FF FE);"
                        + " save it as UTF-8");
        // As dataset upload does, a UTF-8 byte order mark before the first line is not part of it.
        Path bom = Files.write(
                dir.resolve("bom.jsonl"),
                ("\ufeff{\"id\": \"a\"}\n{\"id\": \"b\"}\n").getBytes(StandardCharsets.UTF_8));
        assertThat(SeedReader.read(bom, "id")).extracting(SeedReader.Seed::id).containsExactly("a", "b");
    }

    @Test
    void aLineNestedTooDeeplySaysWhereInPlainWords() throws Exception {
        // {"id": "a", "x": is 17 characters: the 1000th bracket, level 1001 (the object is level 1), is in column
        // 1017.
        Path file = seeds("{\"id\": \"a\", \"x\": " + "[".repeat(1200) + "]".repeat(1200) + "}\n");
        assertThatThrownBy(() -> SeedReader.read(file, "id"))
                .isInstanceOf(PipelineDefinitionException.class)
                .hasMessage(file + ":1:1017: nested deeper than 1000 levels; each line must be one JSON object"
                        + " of at most 1000 levels");
    }
}
