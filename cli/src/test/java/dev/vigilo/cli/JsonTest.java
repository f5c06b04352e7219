package dev.vigilo.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.core.JsonProcessingException;
import java.io.StringWriter;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The CLI's one JSON: what it reads, it reads strictly; what it prints, one mapper prints. */
class JsonTest {
    @Test
    void whatTheCliReadsItReadsStrictly() throws Exception {
        assertThat(Json.read("{\"a\":1}").path("a").asInt()).isEqualTo(1);
        assertThatThrownBy(() -> Json.read("{\"a\":1,\"a\":2}"))
                .isInstanceOf(JsonProcessingException.class)
                .hasMessageContaining("Duplicate field 'a'");
    }

    @Test
    void theStreamedFormAndTheWholeFormAreTheSameBytes() throws Exception {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("name", "x\u2028\"y");
        m.put("rate", 0.1);
        m.put("none", null);
        StringWriter streamed = new StringWriter();
        try (var g = Json.generator(streamed)) {
            g.writeStartObject();
            g.writeStringField("name", "x\u2028\"y");
            g.writeNumberField("rate", 0.1);
            g.writeNullField("none");
            g.writeEndObject();
        }
        assertThat(streamed.toString())
                .isEqualTo(Json.write(m))
                .isEqualTo("{\"name\":\"x\u2028\\\"y\",\"rate\":0.1,\"none\":null}");
    }
}
