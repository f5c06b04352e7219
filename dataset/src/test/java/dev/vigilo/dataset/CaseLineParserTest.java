package dev.vigilo.dataset;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class CaseLineParserTest {
    private final CaseLineParser parser = new CaseLineParser(DatasetLimits.MAX_CASE_BYTES);

    private CaseFields parse(String line) throws CaseLineParser.CaseSyntaxException {
        byte[] b = line.getBytes(StandardCharsets.UTF_8);
        return parser.parse(b, b.length);
    }

    private void rejects(String line, int column, String message) {
        assertThatThrownBy(() -> parse(line))
                .isInstanceOf(CaseLineParser.CaseSyntaxException.class)
                .hasMessageContaining(message)
                .satisfies(e -> assertThat(((CaseLineParser.CaseSyntaxException) e).column)
                        .isEqualTo(column));
    }

    @Test
    void readsAllFields() throws Exception {
        CaseFields f = parse("{\"id\":\"q-1\",\"input\":{\"deep\":[1,2,{\"x\":null}]},\"expected\":\"4\","
                + "\"group\":\"math\",\"tags\":[\"easy\",\"é\"],\"metadata\":{\"k\":1}}");
        assertThat(f).isEqualTo(new CaseFields("q-1", Optional.of("math"), List.of("easy", "é")));
        assertThat(parse("{\"input\":null,\"id\":\"x\"}").group()).isEmpty();
    }

    @Test
    void rejectsWithColumns() {
        rejects("{\"id\":\"a\",\"input\":1,}", 21, "invalid JSON");
        rejects("[1,2]", 1, "must be a JSON object, found an array");
        rejects("\"text\"", 1, "must be a JSON object, found a string");
        rejects("{\"input\":1}", 1, "has no \"id\"");
        rejects("{\"id\":7,\"input\":1}", 2, "\"id\" must be a string, found a number");
        rejects("{\"id\":\"\",\"input\":1}", 2, "must not be empty");
        rejects("{\"id\":\"a\"}", 1, "has no \"input\"");
        rejects("{\"id\":\"a\",\"input\":1,\"tags\":\"x\"}", 21, "\"tags\" must be an array of strings");
        rejects("{\"id\":\"a\",\"input\":1,\"tags\":[1]}", 29, "only strings");
        rejects("{\"id\":\"a\",\"input\":1,\"group\":[]}", 21, "\"group\" must be a string");
        rejects("{\"id\":\"a\",\"input\":1,\"metadata\":3}", 21, "\"metadata\" must be an object");
        rejects("{\"id\":\"a\",\"input\":1,\"expcted\":3}", 21, "unknown field \"expcted\"");
        rejects("{\"id\":\"a\",\"input\":1} {\"id\":\"b\"}", 22, "after the case object");
        rejects("{\"id\":\"a\",\"id\":\"b\",\"input\":1}", 11, "duplicate field \"id\"");
    }

    @Test
    void rejectsInvalidUtf8WithItsPosition() {
        byte[] b = "{\"id\":\"a\",\"input\":\"xx\"}".getBytes(StandardCharsets.US_ASCII);
        b[20] = (byte) 0xC3; // a lead byte followed by an ASCII quote is malformed
        assertThatThrownBy(() -> parser.parse(b, b.length))
                .hasMessageContaining("not valid UTF-8")
                .satisfies(e -> assertThat(((CaseLineParser.CaseSyntaxException) e).column)
                        .isEqualTo(21));
    }
}
