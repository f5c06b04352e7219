package dev.vigilo.plan;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vigilo.dataset.CaseFields;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class ProfileParserTest {
    static final String YAML = """
            name: smoke
            agent: {kind: command, command: [python3, agent.py], timeout_seconds: 30}
            evaluators:
              - {name: exact, kind: exact_match}
              - {name: has, kind: contains, case_sensitive: false}
              - {name: re, kind: regex, applies_to: {groups: [math]}}
              - {name: judge, kind: command, command: [./judge], pass_score: 0.5, applies_to: {tags_any: [hard]}}
            gates:
              - {name: all, required_evaluators: [exact], min_pass_rate: 0.9}
              - {name: math, required_evaluators: [exact, re], min_pass_rate: 0.5, tags_all: [core]}
            limits: {max_cases: 1000}
            """;

    @Test
    void yamlAndJsonAndFileGiveTheSameCanonicalProfile(@TempDir Path dir) throws Exception {
        Profile yaml = ProfileParser.parse(YAML);
        String json = new String(ProfileJson.encode(yaml));
        Profile fromJson = ProfileParser.parse(json);
        Path f = dir.resolve("p.yaml");
        Files.writeString(f, YAML);
        Profile fromFile = ProfileInput.file(f).parse();
        assertThat(ProfileJson.sha256(fromJson)).isEqualTo(ProfileJson.sha256(yaml));
        assertThat(ProfileJson.sha256(fromFile)).isEqualTo(ProfileJson.sha256(yaml));
        assertThat(yaml.gates()).hasSize(2);
        assertThat(yaml.evaluators().get(2).appliesTo()).isPresent();
        assertThat(yaml.limits().maxCases()).isEqualTo(1000);
        assertThat(yaml.agent().parameters().get("timeout_seconds").asInt()).isEqualTo(30);
    }

    @Test
    void httpAgentIsAccepted() {
        Profile p = ProfileParser.parse("""
                name: h
                agent: {kind: http, url: "https://api.example.com/v1/chat/completions", model: m, api_key_env: KEY}
                evaluators: [{name: e, kind: exact_match}]
                gates: [{name: g, required_evaluators: [e], min_pass_rate: 1}]
                """);
        assertThat(p.agent().kind()).isEqualTo(Profile.AgentKind.HTTP);
        assertThat(p.limits().maxCases()).isEqualTo(Profile.Limits.DEFAULT_MAX_CASES);
    }

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                "gates: [{name: g, required_evaluators: [judge], min_pass_rate: 1}]|gates[0].required_evaluators[0]: unknown evaluator \"judge\"",
                "gates: [{name: g, required_evaluators: [e, e], min_pass_rate: 1}]|gates[0].required_evaluators[1]: evaluator \"e\" is listed twice",
                "gates: [{name: g, required_evaluators: [], min_pass_rate: 1}]|gates[0].required_evaluators: must be a non-empty list",
                "gates: [{name: g, required_evaluators: [e]}]|gates[0].min_pass_rate: is required",
                "gates: [{name: g, required_evaluators: [e], min_pass_rate: 1.5}]|gates[0].min_pass_rate: must be a number in [0, 1]",
                "gates: [{name: g, required_evaluators: [e], min_pass_rate: 1, groups: []}]|gates[0].groups: must be a non-empty list",
                "gates: [{name: g, required_evaluators: [e], min_pass_rate: 1, tags_any: [a, a]}]|gates[0].tags_any[1]: \"a\" is listed twice",
                "gates: [{name: g, required_evaluators: [e], min_pass_rate: 1, colour: red}]|gates[0].colour: unknown key",
                "gates: [{name: g, required_evaluators: [e], min_pass_rate: 1}, {name: g, required_evaluators: [e], min_pass_rate: 1}]|gates[1].name: duplicate gate name \"g\"",
                "gates: []|gates: is empty",
                "gates: {}|gates: must be a list",
            })
    void badGatesNameTheirPath(String gates, String expected) {
        String doc = """
                name: p
                agent: {kind: command, command: [a]}
                evaluators: [{name: e, kind: exact_match}]
                """ + gates + "\n";
        assertThatThrownBy(() -> ProfileParser.parse(doc))
                .isInstanceOf(ProfileException.class)
                .hasMessageContaining(expected);
    }

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                "[{name: e, kind: oracle}]|evaluators[0].kind: unknown evaluator kind \"oracle\"",
                "[{kind: exact_match}]|evaluators[0].name: is required",
                "[{name: e, kind: exact_match}, {name: e, kind: contains}]|evaluators[1].name: duplicate evaluator name",
                "[{name: e, kind: regex, pattern: '(' }]|evaluators[0].pattern: invalid regular expression: missing closing )",
                "[{name: e, kind: regex, pattern: '(?=x)y' }]|evaluators[0].pattern: invalid regular expression: invalid or unsupported Perl syntax",
                "[{name: e, kind: regex, pattern: '(a)\\1' }]|evaluators[0].pattern: invalid regular expression: invalid escape sequence",
                "[{name: e, kind: regex, pattern: '((a{1000}){1000}){1000}' }]|evaluators[0].pattern: regular expression is too large",
                "[{name: e, kind: command}]|evaluators[0].command: is required",
                "[{name: e, kind: command, command: [x], pass_score: 2}]|evaluators[0].pass_score: must be a number in [0, 1]",
                "[{name: e, kind: exact_match, applies_to: {}}]|evaluators[0].applies_to: is empty",
                "[{name: e, kind: exact_match, applies_to: {group: [a]}}]|evaluators[0].applies_to.group: unknown key",
                "[{name: e, kind: exact_match, trim: yes please}]|evaluators[0].trim: must be true or false",
                "[{name: 'bad name', kind: exact_match}]|evaluators[0].name: \"bad name\" is not a valid name",
                "[]|evaluators: is empty",
            })
    void badEvaluatorsNameTheirPath(String evaluators, String expected) {
        String doc = "name: p\nagent: {kind: command, command: [a]}\nevaluators: " + evaluators
                + "\ngates: [{name: g, required_evaluators: [e], min_pass_rate: 1}]\n";
        assertThatThrownBy(() -> ProfileParser.parse(doc))
                .isInstanceOf(ProfileException.class)
                .hasMessageContaining(expected);
    }

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                "{kind: rpc}|agent.kind: unknown agent kind \"rpc\"",
                "{kind: command}|agent.command: is required",
                "{kind: command, command: [a], timeout_seconds: 0}|agent.timeout_seconds: must be an integer in [1, 3600]",
                "{kind: http, model: m}|agent.url: is required",
                "{kind: http, url: 'ftp://x/y', model: m}|agent.url: must be an http:// or https:// URL",
                "{kind: http, url: 'https://x/y'}|agent.model: is required",
                "{kind: http, url: 'https://x/y', model: m, api_key_env: 'sk-123'}|agent.api_key_env: must name an environment variable",
                "{kind: http, url: 'https://x/y', model: m, temperature: 9}|agent.temperature: must be a number in [0, 2]",
                "{kind: http, url: 'https://x/y', model: m, max_attempts: 0}|agent.max_attempts: must be an integer in [1, 10]",
                "{kind: command, command: [a], max_attempts: 11}|agent.max_attempts: must be an integer in [1, 10]",
                "[a]|agent: must be a mapping",
            })
    void badAgentsNameTheirPath(String agent, String expected) {
        String doc = "name: p\nagent: " + agent + "\nevaluators: [{name: e, kind: exact_match}]\n"
                + "gates: [{name: g, required_evaluators: [e], min_pass_rate: 1}]\n";
        assertThatThrownBy(() -> ProfileParser.parse(doc))
                .isInstanceOf(ProfileException.class)
                .hasMessageContaining(expected);
    }

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                "http://user:pw@api.example.com/v1/chat/completions",
                "https://sk-live-123@api.example.com/v1/chat/completions",
                "https://api.example.com/v1/chat/completions?key=sk-live-123",
                "https://api.example.com/v1/chat/completions?model=m&API_KEY=sk-live-123",
                "https://api.example.com/v1/chat/completions?access_token=t",
                "https://api.example.com/v1/chat/completions?X-Amz-Signature=abc&X-Amz-Credential=c",
                "https://api.example.com/v1/chat/completions#token=t",
                "ftp://user:pw@api.example.com/v1",
            })
    void anAgentUrlCarryingCredentialsIsRefusedWithoutEchoingIt(String url) {
        String doc = "name: p\nagent: {kind: http, url: '" + url + "', model: m, api_key_env: KEY}\n"
                + "evaluators: [{name: e, kind: exact_match}]\n"
                + "gates: [{name: g, required_evaluators: [e], min_pass_rate: 1}]\n";
        assertThatThrownBy(() -> ProfileParser.parse(doc))
                .isInstanceOf(ProfileException.class)
                .hasMessage(
                        "--profile:2:26: agent.url: 'url' must not carry credentials; put the key in the variable api_key_env names")
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain("pw", "sk-live", "abc"));
    }

    @Test
    void aUrlThatDoesNotParseIsNotEchoed() {
        String doc = "name: p\nagent: {kind: http, url: 'https://h/v1?key=sk live', model: m}\n"
                + "evaluators: [{name: e, kind: exact_match}]\n"
                + "gates: [{name: g, required_evaluators: [e], min_pass_rate: 1}]\n";
        assertThatThrownBy(() -> ProfileParser.parse(doc))
                .isInstanceOf(ProfileException.class)
                .hasMessageStartingWith(
                        "--profile:2:26: agent.url: is not a URL (Illegal character in query at index 19)")
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain("sk live"));
    }

    @Test
    void aCommandAgentMayNameTheVariableOfTheKeyItUses() {
        String base = "name: p\nagent: {kind: command, command: [a]%s}\n"
                + "evaluators: [{name: e, kind: exact_match}]\n"
                + "gates: [{name: g, required_evaluators: [e], min_pass_rate: 1}]\n";
        Profile with = ProfileParser.parse(base.formatted(", api_key_env: OPENAI_API_KEY"));
        assertThat(with.agent().parameters().get("api_key_env").asText()).isEqualTo("OPENAI_API_KEY");
        // Without it the canonical profile (and so the identity of every earlier profile) is unchanged.
        Profile without = ProfileParser.parse(base.formatted(""));
        assertThat(without.agent().parameters().has("api_key_env")).isFalse();
        assertThat(new String(ProfileJson.encode(without), StandardCharsets.UTF_8))
                .doesNotContain("api_key_env");
        assertThatThrownBy(() -> ProfileParser.parse(base.formatted(", api_key_env: 'sk-123'")))
                .isInstanceOf(ProfileException.class)
                .hasMessageContaining("agent.api_key_env: must name an environment variable");
    }

    @Test
    void backtrackingPronePatternsAreAcceptedForTheLinearTimeEngine() {
        Profile p = ProfileParser.parse("name: p\nagent: {kind: command, command: [a]}\n"
                + "evaluators: [{name: e, kind: regex, pattern: '(a+)+$'}]\n"
                + "gates: [{name: g, required_evaluators: [e], min_pass_rate: 1}]\n");
        assertThat(p.evaluators().get(0).parameters().get("pattern").asText()).isEqualTo("(a+)+$");
    }

    @Test
    void maxAttemptsIsCanonicalOnlyWhenItIsNotTheDefault() {
        String before = "name: p\nagent: {kind: command, command: [a]}\n"
                + "evaluators: [{name: e, kind: exact_match}]\n"
                + "gates: [{name: g, required_evaluators: [e], min_pass_rate: 1}]\n";
        // The canonical bytes of a profile that does not mention max_attempts are what they always were.
        assertThat(new String(ProfileJson.encode(ProfileParser.parse(before)), StandardCharsets.UTF_8))
                .isEqualTo("{\"version\":1,\"name\":\"p\",\"agent\":{\"kind\":\"command\",\"command\":[\"a\"],"
                        + "\"timeout_seconds\":300,\"env\":{}},\"evaluators\":[{\"name\":\"e\",\"kind\":\"exact_match\","
                        + "\"case_sensitive\":true,\"trim\":true}],\"gates\":[{\"name\":\"g\",\"required_evaluators\":"
                        + "[\"e\"],\"min_pass_rate\":1.0}],\"limits\":{\"max_cases\":10000000}}");
        Profile explicitDefault = ProfileParser.parse(before.replace("command: [a]", "command: [a], max_attempts: 3"));
        assertThat(ProfileJson.sha256(explicitDefault)).isEqualTo(ProfileJson.sha256(ProfileParser.parse(before)));
        Profile five = ProfileParser.parse(before.replace("command: [a]", "command: [a], max_attempts: 5"));
        assertThat(five.agent().parameters().get("max_attempts").asInt()).isEqualTo(5);
        assertThat(ProfileJson.sha256(five)).isNotEqualTo(ProfileJson.sha256(ProfileParser.parse(before)));
        Profile http = ProfileParser.parse(before.replace(
                "{kind: command, command: [a]}", "{kind: http, url: 'http://h/v1', model: m, max_attempts: 1}"));
        assertThat(http.agent().parameters().get("max_attempts").asInt()).isEqualTo(1);
    }

    @Test
    void documentLevelProblems() {
        assertThatThrownBy(() -> ProfileParser.parse("")).hasMessageContaining("profile: the document is empty");
        assertThatThrownBy(() -> ProfileParser.parse("[1, 2]")).hasMessageContaining("profile: must be a mapping");
        assertThatThrownBy(() -> ProfileParser.parse("{\"name\": \"a\", \"name\": \"b\"}"))
                .hasMessageContaining("profile: not valid JSON");
        assertThatThrownBy(() -> ProfileParser.parse("name: a\nname: b\n"))
                .hasMessageContaining("profile: not valid YAML");
        assertThatThrownBy(() -> ProfileParser.parse("{\"name\": ")).hasMessageContaining("profile: not valid JSON");
        assertThatThrownBy(() -> ProfileParser.parse("version: 2\nname: a\n"))
                .hasMessageContaining("version: profile version 2 is newer");
        assertThatThrownBy(() -> ProfileParser.parse("name: a\nextra: 1\n")).hasMessageContaining("extra: unknown key");
        assertThatThrownBy(() -> ProfileParser.parse("name: a\n"))
                .hasMessageContaining("agent: is required")
                .hasMessageContaining("evaluators: is required")
                .hasMessageContaining("gates: is required");
        assertThatThrownBy(() -> ProfileParser.parse("name: a\nlimits: {max_cases: 0}\n"))
                .hasMessageContaining("limits.max_cases: must be an integer");
    }

    @Test
    void sixtyFiveGatesAreRejected() {
        StringBuilder b = new StringBuilder("name: p\nagent: {kind: command, command: [a]}\n"
                + "evaluators: [{name: e, kind: exact_match}]\ngates:\n");
        for (int i = 0; i < 65; i++) {
            b.append("  - {name: g").append(i).append(", required_evaluators: [e], min_pass_rate: 1}\n");
        }
        assertThatThrownBy(() -> ProfileParser.parse(b.toString()))
                .hasMessageContaining("gates: has 65 gates, at most 64");
    }

    @Test
    void inputOverEightMebibytesIsRejectedBeforeParsing(@TempDir Path dir) throws Exception {
        byte[] big = new byte[Profile.MAX_BYTES + 1];
        java.util.Arrays.fill(big, (byte) ' ');
        assertThatThrownBy(() -> ProfileParser.parse(big)).hasMessageContaining("larger than 8388608 bytes");
        Path f = dir.resolve("big.yaml");
        Files.write(f, big);
        assertThatThrownBy(() -> ProfileParser.parseFile(f)).hasMessageContaining("larger than 8388608 bytes");
        assertThatThrownBy(() -> ProfileParser.parseFile(dir.resolve("none.yaml")))
                .hasMessageContaining("does not exist");
    }

    @Test
    void aLargeProfileUnderTheLimitParses() {
        // A ~5 MB system prompt of words: over SnakeYAML's default 3 MB code point limit, under ours. (Words, as
        // prompts have: SnakeYAML's reader copies its window for every 1 KiB of one token, so a single 5 MB token
        // costs it gigabytes of copying; docs/formats/plan-profile.md says so.)
        String prompt = "word ".repeat(1_000_000).strip() + "s";
        Profile p = ProfileParser.parse("name: big\nagent: {kind: http, url: 'http://h/v1', model: m, system_prompt: "
                + prompt + "}\nevaluators: [{name: e, kind: exact_match}]\n"
                + "gates: [{name: g, required_evaluators: [e], min_pass_rate: 1}]\n");
        assertThat(p.agent().parameters().get("system_prompt").asText()).isEqualTo(prompt);
    }

    @Test
    void selectionRulesAreExact() {
        Profile p = ProfileParser.parse(YAML);
        Profile.Gate all = p.gates().get(0);
        Profile.Gate math = p.gates().get(1);
        CaseFields plain = new CaseFields("a", Optional.empty(), List.of());
        CaseFields mathCore = new CaseFields("b", Optional.of("math"), List.of("core", "x"));
        CaseFields mathOnly = new CaseFields("c", Optional.of("math"), List.of("x"));
        CaseFields otherCore = new CaseFields("d", Optional.of("prose"), List.of("core"));
        assertThat(Selection.selects(p, all, plain)).isTrue();
        assertThat(Selection.selects(p, math, mathCore)).isTrue();
        assertThat(Selection.selects(p, math, mathOnly))
                .as("tags_all missing core")
                .isFalse();
        assertThat(Selection.selects(p, math, otherCore))
                .as("regex evaluator does not apply")
                .isFalse();
        assertThat(Selection.applies(p.evaluators().get(3), new CaseFields("e", Optional.empty(), List.of("hard"))))
                .isTrue();
        assertThat(Selection.applies(p.evaluators().get(3), plain)).isFalse();
        Profile.Selector any = new Profile.Selector(List.of(), List.of(), List.of("p", "q"));
        assertThat(Selection.matches(any, new CaseFields("f", Optional.empty(), List.of("q"))))
                .isTrue();
        assertThat(Selection.matches(any, new CaseFields("f", Optional.empty(), List.of("r"))))
                .isFalse();
        Profile.Selector groups = new Profile.Selector(List.of("g"), List.of(), List.of());
        assertThat(Selection.matches(groups, plain))
                .as("no group never matches a groups rule")
                .isFalse();
        assertThat(Selection.matches(Profile.Selector.ALL, plain)).isTrue();
    }

    @Test
    void syntaxAndEncodingErrorsAreOneLineWithTheirLocation() {
        assertThatThrownBy(() -> ProfileParser.parse("name: p\nagent: [unclosed\n"))
                .isInstanceOf(ProfileException.class)
                .hasMessageMatching("profile: not valid YAML at --profile:\\d+:\\d+: [^\\n]+; fix the syntax");
        assertThatThrownBy(() -> ProfileParser.parse(
                        new byte[] {'n', 'a', 'm', 'e', ':', ' ', 'x', '\n', 'a', (byte) 0xC3}, "p.yaml"))
                .isInstanceOf(ProfileException.class)
                .hasMessage("profile: not valid UTF-8 at p.yaml:2:2: byte 0xC3; save the profile as UTF-8");
    }

    @Test
    void aDocumentNestedTooDeeplySaysWhereInPlainWords() {
        // {"name": is 9 characters: the 64th bracket, level 65 (the object is level 1), is in column 73.
        String json = "{\"name\": " + "[".repeat(100) + "]".repeat(100) + "}";
        assertThatThrownBy(() -> ProfileParser.parse(json.getBytes(StandardCharsets.UTF_8), "deep.json"))
                .isInstanceOf(ProfileException.class)
                .hasMessage("profile: not valid JSON at deep.json:1:73: nested deeper than 64 levels; flatten or"
                        + " shorten it")
                .hasMessageNotContaining("StreamReadConstraints");
        StringBuilder yaml = new StringBuilder("name: p\nagent:\n");
        for (int i = 1; i <= 80; i++) {
            yaml.append("  ".repeat(i)).append("k:\n");
        }
        yaml.append("  ".repeat(81)).append("1\n");
        assertThatThrownBy(() -> ProfileParser.parse(yaml.toString().getBytes(StandardCharsets.UTF_8), "deep.yaml"))
                .isInstanceOf(ProfileException.class)
                .hasMessageMatching("profile: not valid YAML at deep.yaml:6\\d:\\d+: nested deeper than 64 levels;"
                        + " flatten or shorten it");
    }

    @Test
    void aProfileSavedAsUtf16SaysSo() {
        byte[] utf16 = "name: p\n".getBytes(StandardCharsets.UTF_16LE);
        byte[] withMark = new byte[utf16.length + 2];
        withMark[0] = (byte) 0xFF;
        withMark[1] = (byte) 0xFE;
        System.arraycopy(utf16, 0, withMark, 2, utf16.length);
        assertThatThrownBy(() -> ProfileParser.parse(withMark, "p.yaml"))
                .isInstanceOf(ProfileException.class)
                .hasMessage("profile: p.yaml is UTF-16 (little-endian) text (it starts with the byte order mark FF"
                        + " FE); save it as UTF-8");
        byte[] bigEndian = {(byte) 0xFE, (byte) 0xFF, 0, 'n'};
        assertThatThrownBy(() -> ProfileParser.parse(bigEndian, "p.yaml"))
                .isInstanceOf(ProfileException.class)
                .hasMessageContaining("p.yaml is UTF-16 (big-endian) text");
    }

    @Test
    void everyProblemSaysWhereItIsAsFileLineColumnAndKeyPath() {
        String doc = """
                name: p
                agent: {kind: command, command: [a], timeout_seconds: 0}
                evaluators:
                  - {name: e, kind: exact_match}
                gates:
                  - name: g
                    required_evaluators:
                      - e
                      - judge
                    min_pass_rate: 1
                  - {name: h, min_pass_rate: 1}
                """;
        assertThatThrownBy(() -> ProfileParser.parse(doc.getBytes(StandardCharsets.UTF_8), "profile.yaml"))
                .isInstanceOf(ProfileException.class)
                .satisfies(e -> assertThat(((ProfileException) e).problems())
                        .containsExactly(
                                "profile.yaml:2:55: agent.timeout_seconds: must be an integer in [1, 3600], got 0",
                                "profile.yaml:9:9: gates[0].required_evaluators[1]: unknown evaluator \"judge\";"
                                        + " define it under evaluators or fix the name",
                                // Where a key is missing, the mapping that lacks it is named.
                                "profile.yaml:11:5: gates[1].required_evaluators: is required: list the evaluators"
                                        + " this gate needs"));
    }
}
