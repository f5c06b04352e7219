package dev.vigilo.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.junit.jupiter.api.Test;

/** The one template rendering (datagen's steps, an http agent's messages) and the case placeholders. */
class TemplateTest {
    static final ObjectMapper MAPPER = new ObjectMapper();

    static JsonNode json(String text) {
        try {
            return MAPPER.readTree(text);
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void stringsVerbatimOtherValuesCompactWithSortedKeysMissingAndNullAsNothing() {
        ObjectNode fields = (ObjectNode) json("{\"s\":\"a \\\"b\\\"\",\"n\":1.5,\"i\":7,\"b\":true,\"z\":null,"
                + "\"o\":{\"y\":[1,{\"d\":1,\"c\":2}],\"x\":\"t\"}}");
        Template t = Template.of("{{s}}|{{n}}|{{i}}|{{b}}|{{z}}|{{missing}}|{{o}}");
        assertThat(t.render(fields::get)).isEqualTo("a \"b\"|1.5|7|true|||{\"x\":\"t\",\"y\":[1,{\"c\":2,\"d\":1}]}");
    }

    @Test
    void placeholdersAllowBlanksInsideAndOtherBracesAreText() {
        Template t = Template.of("{{ a }} {{b}}{{  a.b-c_1 }} {a} {{ not one }} {{}} {{{a}}}");
        assertThat(t.placeholders()).containsExactly("a", "b", "a.b-c_1", "a");
        assertThat(t.render(name -> json("\"<" + name + ">\"")))
                .isEqualTo("<a> <b><a.b-c_1> {a} {{ not one }} {{}} {<a>}");
    }

    @Test
    void valuesAreInsertedLiterallyNeverRenderedAgain() {
        Template t = Template.of("{{v}} and {{v}}");
        assertThat(t.render(name -> json("\"{{v}} $1 \\\\ $\""))).isEqualTo("{{v}} $1 \\ $ and {{v}} $1 \\ $");
    }

    @Test
    void casePlaceholdersNameTheCase() {
        JsonNode c = json("{\"id\":\"q-1\",\"input\":{\"question\":\"Why?\",\"n\":3},\"metadata\":{\"lang\":\"en\"}}");
        assertThat(CasePlaceholders.value("case.id", c).asText()).isEqualTo("q-1");
        assertThat(CasePlaceholders.value("input", c)).isEqualTo(json("{\"question\":\"Why?\",\"n\":3}"));
        assertThat(CasePlaceholders.value("input.question", c).asText()).isEqualTo("Why?");
        assertThat(CasePlaceholders.value("input.n", c).asInt()).isEqualTo(3);
        assertThat(CasePlaceholders.value("metadata.lang", c).asText()).isEqualTo("en");
        assertThat(CasePlaceholders.value("input.none", c).isMissingNode()).isTrue();
        assertThat(CasePlaceholders.value("metadata.lang", json("{\"id\":\"q\",\"input\":\"x\"}"))
                        .isMissingNode())
                .isTrue();
        assertThat(CasePlaceholders.value("input.question", json("{\"id\":\"q\",\"input\":\"x\"}"))
                        .isMissingNode())
                .isTrue();
    }

    @Test
    void anyOtherNameIsAProblemSayingWhatIsAllowed() {
        for (String bad : new String[] {
            "output", "expected", "inputs", "input.", "input.a.b", "metadata", "case", "case.ids", "metadata.a.b", "id"
        }) {
            assertThat(CasePlaceholders.problem(bad))
                    .as(bad)
                    .contains("unknown placeholder {{" + bad + "}}: use {{input}}, {{input.FIELD}}, {{metadata.KEY}}"
                            + " or {{case.id}}");
        }
        assertThat(CasePlaceholders.problem(Template.of("{{input}} {{case.id}} {{x}} {{y}}")))
                .contains("unknown placeholder {{x}}: use " + CasePlaceholders.ALLOWED);
        assertThat(CasePlaceholders.problem(Template.of("{{input.q}} {{metadata.k}}")))
                .isEmpty();
        assertThatThrownBy(() -> CasePlaceholders.value("output", json("{}")))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
