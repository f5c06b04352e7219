package dev.vigilo.datagen;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vigilo.checkpoint.LogRoot;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Chat step definitions: what is parsed, and one-line FILE:LINE:COLUMN errors for every bad input. */
class ChatParserTest {
    @TempDir
    Path dir;

    static PipelineSpec parse(String yaml) {
        return PipelineParser.parse("p.yaml", yaml, Path.of("/base"));
    }

    static final String HEAD = "input: s.jsonl\n";

    static String step(String extra) {
        return HEAD + "steps:\n  - name: ask\n    kind: chat\n    url: http://127.0.0.1:1/v1/chat/completions\n"
                + "    model: m\n    messages: [{role: user, content: \"{{q}}\"}]\n" + extra;
    }

    @Test
    void parsesAChatStep() {
        PipelineSpec p = parse(HEAD + """
        prices:
          m: {prompt_per_million: 0.15, completion_per_million: 0.6}
        steps:
          - name: ask
            kind: chat
            url: http://127.0.0.1:1/v1/chat/completions
            model: m
            api_key_env: KEY
            messages: [{role: system, content: "be brief"}, {role: user, content: "{{q}}"}]
            n: 2
            response_schema: {type: object, properties: {a: {type: string}}}
            response_format: json_object
            output_field: answers
            usage_field: false
            rate_limit: {requests_per_minute: 60, tokens_per_minute: 1000}
            cache: true
        """);
        ChatSpec c = p.steps().get(0).chat();
        assertThat(c.model()).isEqualTo("m");
        assertThat(c.messages()).hasSize(2);
        assertThat(c.choices()).isEqualTo(2);
        assertThat(c.parameters().path("n").asInt()).isEqualTo(2);
        assertThat(c.responseFormat()).isEqualTo(ChatSpec.ResponseFormat.JSON_OBJECT);
        assertThat(c.outputs()).isEqualTo(new ChatSpec.Outputs("answers", "ask_reasoning", "ask_finish_reason", null));
        assertThat(c.rateLimit()).isEqualTo(new ChatSpec.RateLimit(60, 1000));
        assertThat(c.cache()).isTrue();
        assertThat(c.price().promptPerMillion()).isEqualTo(new BigDecimal("0.15"));
        assertThat(c.price().cost(1_000_000, 2_000_000)).isEqualByComparingTo("1.35");
    }

    @Test
    void anInvalidSchemaIsAnErrorAtTheSchema() {
        assertThatThrownBy(() -> parse(step("    response_schema: {type: 12}\n")))
                .isInstanceOf(PipelineDefinitionException.class)
                .hasMessageStartingWith("p.yaml:8:22: 'response_schema' is not a valid JSON Schema (draft 2020-12): ")
                .hasMessageEndingWith("; fix the schema")
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain("\n"));
    }

    @Test
    void aMalformedSchemaIsAnErrorAtTheSchema() {
        assertThatThrownBy(() -> parse(step("    response_schema: \"{not json\"\n")))
                .isInstanceOf(PipelineDefinitionException.class)
                .hasMessageStartingWith("p.yaml:8:22: 'response_schema' must be a JSON Schema object");
        assertThatThrownBy(() -> parse(step("    fields: {a: b}\n")))
                .hasMessageStartingWith(
                        "p.yaml:8:13: 'fields' maps the answer's properties: it needs a 'response_schema'");
        assertThatThrownBy(() -> parse(step(
                        "    response_schema: {type: object, properties: {a: {type: string}}}\n    fields: {b: x}\n")))
                .hasMessageStartingWith("p.yaml:9:17: 'b' is not a property of the response_schema");
    }

    @Test
    void aModelWithoutAPriceIsAnErrorAtTheModel() {
        assertThatThrownBy(() ->
                        parse("input: s.jsonl\nprices:\n  other: {prompt_per_million: 1, completion_per_million: 2}\n"
                                + step("").substring(HEAD.length())))
                .isInstanceOf(PipelineDefinitionException.class)
                .hasMessage("p.yaml:8:12: no price for model 'm' in 'prices' (priced: [other]); add"
                        + " {prompt_per_million, completion_per_million} for it");
    }

    @Test
    void otherBadKeysAreErrorsAtTheirPlace() {
        assertThatThrownBy(() -> parse(step("    temperature: 3\n")))
                .hasMessage("p.yaml:8:18: 'temperature' must be a number from 0 to 2");
        assertThatThrownBy(() -> parse(step("    headers: {Authorization: x}\n")))
                .hasMessageStartingWith(
                        "p.yaml:8:30: header 'Authorization' is set by the step itself; name the key's");
        assertThatThrownBy(() -> parse(step("    response_format: json_schema\n")))
                .hasMessage("p.yaml:8:22: 'response_format' needs a 'response_schema'");
        assertThatThrownBy(() -> parse(HEAD + "steps:\n  - {name: a, kind: chat, url: \"ftp://x\", model: m, messages:"
                        + " [{role: user, content: x}]}\n"))
                .hasMessageStartingWith("p.yaml:3:32: 'url' must be an http:// or https:// URL");
        assertThatThrownBy(() -> parse(step("    rate_limit: {requests_per_minute: 60}\n")
                        .replace(
                                "steps:\n",
                                "steps:\n"
                                        + "  - {name: b, kind: chat, url: http://127.0.0.1:1/v1/chat/completions, model: m, messages: [{role:"
                                        + " user, content: x}], rate_limit: {requests_per_minute: 10}}\n")))
                .hasMessageStartingWith("p.yaml:9:17: rate_limit differs from the one set for the same url at 3:");
    }

    @Test
    void aUrlCarryingCredentialsIsAnErrorAtTheUrlThatDoesNotEchoIt() {
        for (String url : new String[] {
            "http://user:pw@127.0.0.1:1/v1/chat/completions",
            "http://127.0.0.1:1/v1/chat/completions?key=sk-live-123",
            "http://127.0.0.1:1/v1/chat/completions?API_KEY=sk-live-123",
            "http://127.0.0.1:1/v1/chat/completions?model=m&access_token=sk-live-123",
            "ftp://user:pw@127.0.0.1:1/x"
        }) {
            assertThatThrownBy(() -> parse(step("").replace("http://127.0.0.1:1/v1/chat/completions", url)))
                    .as(url)
                    .isInstanceOf(PipelineDefinitionException.class)
                    .hasMessage("p.yaml:5:10: 'url' must not carry credentials; put the key in the variable"
                            + " api_key_env names");
        }
    }

    @Test
    void aMissingKeyVariableIsAnErrorAtApiKeyEnvAndWritesNothing() throws Exception {
        Files.writeString(dir.resolve("s.jsonl"), "{\"q\": 1}\n");
        Path yaml = dir.resolve("p.yaml");
        Files.writeString(yaml, step("    api_key_env: NOT_SET_ANYWHERE\n"));
        PipelineSpec spec = PipelineParser.parse(yaml);
        Path root = dir.resolve("root");
        assertThatThrownBy(() -> PipelineRunner.run(
                        spec,
                        new PipelineRunner.Options(LogRoot.local(root), "e", 1, DatagenProgress.NONE)
                                .withEnvironment(Map.<String, String>of()::get)))
                .isInstanceOf(PipelineDefinitionException.class)
                .hasMessage(yaml + ":8:18: environment variable NOT_SET_ANYWHERE (api_key_env of step 'ask') is not"
                        + " set; export it with the endpoint's API key");
        assertThat(root).doesNotExist();
    }
}
