package dev.vigilo.plan;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The json, numeric and similarity evaluators in a profile: validated with locations, written canonically. */
class EvaluatorKindsProfileTest {
    static String profile(String evaluators) {
        return "name: p\nagent: {kind: command, command: [a]}\nevaluators:\n" + evaluators
                + "gates: [{name: g, required_evaluators: [e], min_pass_rate: 1}]\n";
    }

    static List<String> problems(String evaluators) {
        try {
            ProfileParser.parse(profile(evaluators).getBytes(StandardCharsets.UTF_8), "p.yaml");
        } catch (ProfileException e) {
            return e.problems();
        }
        throw new AssertionError("the profile was accepted");
    }

    static String canonical(String evaluators) {
        return new String(ProfileJson.encode(ProfileParser.parse(profile(evaluators))), StandardCharsets.UTF_8);
    }

    @Test
    void eachNewKindIsWrittenCanonicallyWithItsDefaults() {
        assertThat(canonical("  - {name: e, kind: json}\n"))
                .contains("\"evaluators\":[{\"name\":\"e\",\"kind\":\"json\",\"schema\":null}]");
        assertThat(canonical("  - {name: e, kind: numeric, tolerance: 0.5}\n"))
                .contains("{\"name\":\"e\",\"kind\":\"numeric\",\"tolerance\":0.5,\"relative_tolerance\":null}");
        assertThat(canonical("  - {name: e, kind: numeric, relative_tolerance: 0}\n"))
                .contains("{\"name\":\"e\",\"kind\":\"numeric\",\"tolerance\":null,\"relative_tolerance\":0.0}");
        assertThat(canonical("  - {name: e, kind: similarity, threshold: 0.8}\n"))
                .contains("{\"name\":\"e\",\"kind\":\"similarity\",\"threshold\":0.8,\"case_sensitive\":true,"
                        + "\"trim\":true}");
    }

    @Test
    void aSchemaIsKeptWithItsKeysSortedSoKeyOrderKeepsTheIdentity() {
        String a = "  - name: e\n    kind: json\n    schema:\n      type: object\n      required: [answer]\n"
                + "      properties: {answer: {type: integer, minimum: 0}}\n";
        String b = "  - name: e\n    kind: json\n    schema:\n"
                + "      properties: {answer: {minimum: 0, type: integer}}\n      required: [answer]\n"
                + "      type: object\n";
        assertThat(canonical(a))
                .contains("\"schema\":{\"properties\":{\"answer\":{\"minimum\":0,\"type\":\"integer\"}},"
                        + "\"required\":[\"answer\"],\"type\":\"object\"}");
        assertThat(ProfileJson.sha256(ProfileParser.parse(profile(a))))
                .isEqualTo(ProfileJson.sha256(ProfileParser.parse(profile(b))));
        assertThat(ProfileJson.sha256(ProfileParser.parse(profile(a.replace("minimum: 0", "minimum: 1")))))
                .isNotEqualTo(ProfileJson.sha256(ProfileParser.parse(profile(a))));
    }

    @Test
    void badOptionsAreProblemsWithTheirLocation() {
        assertThat(problems("  - {name: e, kind: numeric, tolerance: 1, relative_tolerance: 0.1}\n"))
                .containsExactly("p.yaml:4:64: evaluators[0].relative_tolerance: is given beside tolerance; give"
                        + " exactly one of tolerance (absolute) and relative_tolerance");
        assertThat(problems("  - {name: e, kind: numeric}\n"))
                .containsExactly("p.yaml:4:5: evaluators[0]: needs tolerance (absolute) or relative_tolerance;"
                        + " give exactly one");
        assertThat(problems("  - {name: e, kind: similarity, threshold: 1.5}\n"))
                .containsExactly("p.yaml:4:44: evaluators[0].threshold: must be a number in [0, 1]");
        assertThat(problems("  - name: e\n    kind: json\n    schema:\n      type: objekt\n"))
                .singleElement()
                .asString()
                .startsWith("p.yaml:7:7: evaluators[0].schema: is not a usable JSON Schema: ")
                .contains("type");
    }

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                "{name: e, kind: numeric, tolerance: -1}|evaluators[0].tolerance: must be a number >= 0, got -1",
                "{name: e, kind: numeric, relative_tolerance: '0.1'}|evaluators[0].relative_tolerance: must be a number >= 0",
                "{name: e, kind: numeric, tolerance: 1e999}|evaluators[0].tolerance: ",
                "{name: e, kind: numeric, tolerance: 1, trim: true}|evaluators[0].trim: unknown key; allowed here: name, kind, applies_to, tolerance, relative_tolerance",
                "{name: e, kind: similarity}|evaluators[0].threshold: is required",
                "{name: e, kind: similarity, threshold: -0.1}|evaluators[0].threshold: must be a number in [0, 1]",
                "{name: e, kind: similarity, threshold: 0.5, case_sensitive: maybe}|evaluators[0].case_sensitive: must be true or false",
                "{name: e, kind: similarity, threshold: 0.5, pattern: x}|evaluators[0].pattern: unknown key",
                "{name: e, kind: json, schema: [1]}|evaluators[0].schema: must be a mapping (a JSON Schema), got a list",
                "{name: e, kind: json, schema: {type: 7}}|evaluators[0].schema: is not a usable JSON Schema",
                "{name: e, kind: json, schema: {$ref: 'http://127.0.0.1:9/s.json'}}|evaluators[0].schema: is not a usable JSON Schema",
                "{name: e, kind: json, tolerance: 1}|evaluators[0].tolerance: unknown key",
                "{name: e, kind: levenshtein}|evaluators[0].kind: unknown evaluator kind \"levenshtein\"",
            })
    void badNewEvaluatorsNameTheirPath(String evaluator, String expected) {
        assertThatThrownBy(() -> ProfileParser.parse(profile("  - " + evaluator + "\n")))
                .isInstanceOf(ProfileException.class)
                .hasMessageContaining(expected);
    }

    @Test
    void theExampleProfileOfTheNewKindsIsValid() throws Exception {
        Path root = Path.of("").toAbsolutePath();
        while (!Files.exists(root.resolve("examples/evaluators-profile.yaml"))) {
            root = root.getParent();
            assertThat(root)
                    .as("examples/evaluators-profile.yaml above the working directory")
                    .isNotNull();
        }
        Profile p = ProfileInput.file(root.resolve("examples/evaluators-profile.yaml"))
                .parse();
        assertThat(p.evaluators())
                .extracting(Profile.Evaluator::kind)
                .containsExactly(
                        Profile.EvaluatorKind.NUMERIC,
                        Profile.EvaluatorKind.NUMERIC,
                        Profile.EvaluatorKind.JSON,
                        Profile.EvaluatorKind.SIMILARITY);
    }

    @Test
    void anExistingProfileKeepsItsCanonicalBytesAndIdentity() {
        // The profile of ProfileParserTest with all four earlier kinds: its canonical bytes and SHA-256 as they were
        // before json, numeric and similarity existed (no new key for an old kind).
        Profile p = ProfileParser.parse(ProfileParserTest.YAML);
        assertThat(new String(ProfileJson.encode(p), StandardCharsets.UTF_8)).isEqualTo(CANONICAL);
        assertThat(ProfileJson.sha256(p).toHex()).isEqualTo(CANONICAL_SHA256);
    }

    static final String CANONICAL =
            "{\"version\":1,\"name\":\"smoke\",\"agent\":{\"kind\":\"command\",\"command\":[\"python3\",\"agent.p"
                    + "y\"],\"timeout_seconds\":30,\"env\":{}},\"evaluators\":[{\"name\":\"exact\",\"kind\":\"exact_match\""
                    + ",\"case_sensitive\":true,\"trim\":true},{\"name\":\"has\",\"kind\":\"contains\",\"case_sensitive\":f"
                    + "alse},{\"name\":\"re\",\"kind\":\"regex\",\"pattern\":null,\"applies_to\":{\"groups\":[\"math\"]}},{"
                    + "\"name\":\"judge\",\"kind\":\"command\",\"command\":[\"./judge\"],\"timeout_seconds\":60,\"pass_scor"
                    + "e\":0.5,\"env\":{},\"applies_to\":{\"tags_any\":[\"hard\"]}}],\"gates\":[{\"name\":\"all\",\"require"
                    + "d_evaluators\":[\"exact\"],\"min_pass_rate\":0.9},{\"name\":\"math\",\"required_evaluators\":[\"exac"
                    + "t\",\"re\"],\"tags_all\":[\"core\"],\"min_pass_rate\":0.5}],\"limits\":{\"max_cases\":1000}}";
    static final String CANONICAL_SHA256 = "e385405c28ad8ed30846ee659af252b93e27493b68284b222807a5faaced4a3f";
}
