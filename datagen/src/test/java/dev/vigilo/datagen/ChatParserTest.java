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

/** Chat step definitions: what is parsed, and one-line FILE:LINE:COLUMN: key.path errors for every bad input. */
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
                .hasMessageStartingWith(
                        "p.yaml:8:22: steps[0].response_schema: is not a valid JSON Schema (draft 2020-12): ")
                .hasMessageEndingWith("; fix the schema")
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain("\n"));
    }

    @Test
    void aMalformedSchemaIsAnErrorAtTheSchema() {
        assertThatThrownBy(() -> parse(step("    response_schema: \"{not json\"\n")))
                .isInstanceOf(PipelineDefinitionException.class)
                .hasMessage(
                        "p.yaml:8:22: steps[0].response_schema: must be a JSON Schema object (a mapping), e.g. {type:"
                                + " object, properties: {...}}, got a string");
        assertThatThrownBy(() -> parse(step("    fields: {a: b}\n")))
                .hasMessage("p.yaml:8:13: steps[0].fields: maps the answer's properties: it needs a response_schema");
        assertThatThrownBy(() -> parse(step(
                        "    response_schema: {type: object, properties: {a: {type: string}}}\n    fields: {b: x}\n")))
                .hasMessage("p.yaml:9:17: steps[0].fields.b: is not a property of the response_schema (properties: a)");
    }

    @Test
    void aModelWithoutAPriceIsAnErrorAtTheModel() {
        assertThatThrownBy(() ->
                        parse("input: s.jsonl\nprices:\n  other: {prompt_per_million: 1, completion_per_million: 2}\n"
                                + step("").substring(HEAD.length())))
                .isInstanceOf(PipelineDefinitionException.class)
                .hasMessage("p.yaml:8:12: steps[0].model: no price for model \"m\" in prices (priced: other); add"
                        + " {prompt_per_million, completion_per_million} for it");
    }

    @Test
    void aBadPriceIsAnErrorAtThePrice() {
        String steps = step("").substring(HEAD.length());
        assertThatThrownBy(() ->
                        parse(HEAD + "prices:\n  m: {prompt_per_million: -1, completion_per_million: 2}\n" + steps))
                .isInstanceOf(PipelineDefinitionException.class)
                .hasMessage("p.yaml:3:27: prices.m.prompt_per_million: must be a number >= 0, got -1");
        assertThatThrownBy(() -> parse(HEAD + "prices:\n  m: {prompt_per_million: 1}\n" + steps))
                .hasMessage("p.yaml:3:6: prices.m.completion_per_million: is required");
        assertThatThrownBy(() -> parse(HEAD + "prices:\n  m: 3\n" + steps))
                .hasMessage("p.yaml:3:6: prices.m: must be the model's price, a mapping {prompt_per_million,"
                        + " completion_per_million}, got a number");
    }

    @Test
    void otherBadKeysAreErrorsAtTheirPlace() {
        assertThatThrownBy(() -> parse(step("    temperature: 3\n")))
                .hasMessage("p.yaml:8:18: steps[0].temperature: must be a number in [0, 2]");
        assertThatThrownBy(() -> parse(step("    headers: {Authorization: x}\n")))
                .hasMessage("p.yaml:8:30: steps[0].headers.Authorization: is set by the step itself; name the key's"
                        + " variable in api_key_env instead");
        assertThatThrownBy(() -> parse(step("    response_format: json_schema\n")))
                .hasMessage("p.yaml:8:22: steps[0].response_format: needs a response_schema (the schema the format"
                        + " sends)");
        assertThatThrownBy(() -> parse(HEAD + "steps:\n  - {name: a, kind: chat, url: \"ftp://x\", model: m, messages:"
                        + " [{role: user, content: x}]}\n"))
                .hasMessage("p.yaml:3:32: steps[0].url: must be an http:// or https:// URL, e.g."
                        + " https://api.openai.com/v1/chat/completions");
        assertThatThrownBy(() -> parse(step("    rate_limit: {requests_per_minute: 60}\n")
                        .replace(
                                "steps:\n",
                                "steps:\n"
                                        + "  - {name: b, kind: chat, url: http://127.0.0.1:1/v1/chat/completions, model: m, messages: [{role:"
                                        + " user, content: x}], rate_limit: {requests_per_minute: 10}}\n")))
                .hasMessage("p.yaml:9:17: steps[1].rate_limit: differs from the rate_limit set for the same url at"
                        + " steps[0].rate_limit (3:132); an endpoint has one limit, give every step that calls it the"
                        + " same rate_limit");
        assertThatThrownBy(() -> parse(step("    messages: [{role: robot, content: x}]\n")
                        .replace("    messages: [{role: user, content: \"{{q}}\"}]\n", "")))
                .hasMessage("p.yaml:7:23: steps[0].messages[0].role: unknown role \"robot\"; use system, user or"
                        + " assistant");
        assertThatThrownBy(() -> parse(step("    cache: yes please\n")))
                .hasMessage("p.yaml:8:12: steps[0].cache: must be true or false, got \"yes please\"");
        assertThatThrownBy(() -> parse(step("    stop: [a, 7]\n")))
                .hasMessage("p.yaml:8:15: steps[0].stop[1]: must be a string, got a number");
    }

    @Test
    void aCircuitBreakerIsParsedWithItsDefaultsAndBadOnesAreErrorsAtTheirPlace() {
        ChatSpec chat = parse(step("    circuit_breaker: {failures: 3}\n"))
                .steps()
                .get(0)
                .chat();
        assertThat(chat.circuitBreaker()).isEqualTo(new ChatSpec.CircuitBreaker(3, 30));
        assertThat(chat.fleetLimited()).isTrue();
        assertThat(parse(step("")).fleetLimited()).isFalse();
        assertThat(parse(step("    circuit_breaker: {failures: 3}\n")).hasCircuitBreaker())
                .isTrue();
        assertThatThrownBy(() -> parse(step("    circuit_breaker: {failures: 0}\n")))
                .hasMessage("p.yaml:8:33: steps[0].circuit_breaker.failures: must be an integer in [1, 1000], got 0");
        assertThatThrownBy(() -> parse(step("    circuit_breaker: {cool: 1}\n")))
                .hasMessage("p.yaml:8:29: steps[0].circuit_breaker.cool: unknown key; allowed here: failures,"
                        + " cool_down_seconds");
        assertThatThrownBy(() -> parse(step("    circuit_breaker: 5\n")))
                .hasMessage("p.yaml:8:22: steps[0].circuit_breaker: must be a mapping {failures, cool_down_seconds}");
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
                    .hasMessage("p.yaml:5:10: steps[0].url: 'url' must not carry credentials; put the key in the"
                            + " variable api_key_env names");
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
                .hasMessage(yaml + ":8:18: steps[0].api_key_env: environment variable NOT_SET_ANYWHERE (of step"
                        + " \"ask\") is not set; export it with the endpoint's API key");
        assertThat(root).doesNotExist();
    }
}
