package dev.vigilo.plan;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Judges and panels in a profile: validated with locations, written canonically, never the agent itself. */
class JudgeProfileTest {
    static final String HTTP_AGENT =
            "agent: {kind: http, url: 'http://127.0.0.1:8000/v1/chat/completions', model: agent-model}\n";
    static final String COMMAND_AGENT = "agent: {kind: command, command: [a]}\n";

    static String profile(String agent, String evaluators) {
        return "name: p\n" + agent + "evaluators:\n" + evaluators
                + "gates: [{name: g, required_evaluators: [e], min_pass_rate: 1}]\n";
    }

    static List<String> problems(String agent, String evaluators) {
        try {
            ProfileParser.parse(profile(agent, evaluators).getBytes(StandardCharsets.UTF_8), "p.yaml");
        } catch (ProfileException e) {
            return e.problems();
        }
        throw new AssertionError("the profile was accepted");
    }

    static String canonical(String agent, String evaluators) {
        return new String(ProfileJson.encode(ProfileParser.parse(profile(agent, evaluators))), StandardCharsets.UTF_8);
    }

    static String judge(String extra) {
        return "  - name: e\n    kind: judge\n    url: http://127.0.0.1:9000/v1/chat/completions\n"
                + "    model: judge-model\n    rubric: 'Grade {{output}} for {{input}}'\n" + extra;
    }

    @Test
    void aJudgeIsWrittenWithEveryKeyAndItsDefaults() {
        assertThat(canonical(COMMAND_AGENT, judge("    scale: {min: 0, max: 10}\n")))
                .contains("{\"name\":\"e\",\"kind\":\"judge\",\"url\":\"http://127.0.0.1:9000/v1/chat/completions\","
                        + "\"model\":\"judge-model\",\"api_key_env\":null,\"rubric\":\"Grade {{output}} for"
                        + " {{input}}\",\"scale\":{\"min\":0.0,\"max\":10.0},\"grades\":null,\"pass_score\":0.5,"
                        + "\"max_attempts\":3,\"timeout_seconds\":120,\"temperature\":0.0,\"max_tokens\":null,"
                        + "\"allow_self_judge\":false}");
        assertThat(canonical(
                        COMMAND_AGENT,
                        judge("    grades: {A: 1, B: 0.7, F: 0}\n    api_key_env: JUDGE_KEY\n    pass_score: 0.7\n"
                                + "    max_attempts: 5\n    timeout_seconds: 30\n    temperature: 0.2\n"
                                + "    max_tokens: 300\n    applies_to: {groups: [math]}\n")))
                .contains("\"api_key_env\":\"JUDGE_KEY\"", "\"scale\":null,\"grades\":{\"A\":1.0,\"B\":0.7,\"F\":0.0}")
                .contains("\"pass_score\":0.7,\"max_attempts\":5,\"timeout_seconds\":30,\"temperature\":0.2,"
                        + "\"max_tokens\":300,\"allow_self_judge\":false,\"applies_to\":{\"groups\":[\"math\"]}");
    }

    @Test
    void anUnknownPlaceholderIsALocatedProblem() {
        assertThat(problems(
                        COMMAND_AGENT,
                        "  - name: e\n    kind: judge\n    url: http://127.0.0.1:9000/v1\n    model: m\n"
                                + "    rubric: 'Grade {{foo}}'\n    scale: {min: 0, max: 1}\n"))
                .containsExactly("p.yaml:8:13: evaluators[0].rubric: unknown placeholder {{foo}}; known: {{input}},"
                        + " {{output}}, {{expected}}, {{case.id}}, {{metadata.KEY}}");
    }

    @Test
    void exactlyOneOfScaleAndGrades() {
        assertThat(problems(COMMAND_AGENT, judge("")))
                .containsExactly("p.yaml:4:5: evaluators[0]: needs scale: {min, max} or grades: {LETTER: score};"
                        + " give exactly one");
        assertThat(problems(COMMAND_AGENT, judge("    scale: {min: 0, max: 1}\n    grades: {A: 1, F: 0}\n")))
                .containsExactly("p.yaml:10:13: evaluators[0].grades: is given beside scale; give exactly one of"
                        + " scale and grades");
        assertThat(problems(COMMAND_AGENT, judge("    scale: {min: 5, max: 5}\n")))
                .containsExactly("p.yaml:9:26: evaluators[0].scale.max: must be greater than min");
        assertThat(problems(COMMAND_AGENT, judge("    grades: {A: 1}\n")))
                .containsExactly("p.yaml:9:13: evaluators[0].grades: has 1 grades; give 2..26");
        assertThat(problems(COMMAND_AGENT, judge("    grades: {A: 1, F: 2}\n")))
                .containsExactly("p.yaml:9:23: evaluators[0].grades.F: must be a number in [0, 1]");
    }

    @Test
    void badKeysAreLocatedProblems() {
        assertThat(problems(COMMAND_AGENT, judge("    scale: {min: 0, max: 1}\n    max_attempts: 11\n")))
                .containsExactly("p.yaml:10:19: evaluators[0].max_attempts: must be an integer in [1, 10], got 11");
        assertThat(problems(COMMAND_AGENT, judge("    scale: {min: 0, max: 1}\n    system_prompt: x\n")))
                .singleElement()
                .asString()
                .startsWith("p.yaml:10:20: evaluators[0].system_prompt: unknown key; allowed here: name, kind,");
        assertThat(problems(
                        COMMAND_AGENT,
                        "  - {name: e, kind: judge, url: 'http://u:pw@h/v1', model: m, rubric: r, scale: {min: 0,"
                                + " max: 1}}\n"))
                .singleElement()
                .asString()
                .contains("evaluators[0].url: ")
                .contains("must not carry credentials")
                .doesNotContain("pw@");
    }

    @Test
    void aJudgeThatIsTheAgentIsRefusedUnlessAllowed() {
        String self = "  - name: e\n    kind: judge\n    url: 'http://127.0.0.1:8000/v1/chat/completions/'\n"
                + "    model: agent-model\n    rubric: r\n    scale: {min: 0, max: 1}\n";
        assertThat(problems(HTTP_AGENT, self))
                .containsExactly("p.yaml:4:5: evaluators[0]: judges the agent with itself (the same url and model as"
                        + " agent); use another model, or set allow_self_judge: true to allow it");
        assertThat(canonical(HTTP_AGENT, self + "    allow_self_judge: true\n")).contains("\"allow_self_judge\":true");
        assertThat(canonical(HTTP_AGENT, self.replace("agent-model", "judge-model")))
                .contains("judge-model");
        assertThat(canonical(HTTP_AGENT, self.replace("8000", "9000"))).contains("9000");
        // A command agent has no endpoint to be.
        assertThat(canonical(COMMAND_AGENT, self)).contains("agent-model");
    }

    static String panel(String aggregate, String extra) {
        String judge =
                "      - {name: %s, url: 'http://127.0.0.1:%s/v1', model: %s, rubric: r, scale: {min: 0, max: 10}}\n";
        return "  - name: e\n    kind: panel\n    aggregate: " + aggregate + "\n" + extra + "    judges:\n"
                + judge.formatted("a", "9001", "m1") + judge.formatted("b", "9002", "m2");
    }

    @Test
    void aPanelIsWrittenWithItsJudges() {
        assertThat(canonical(COMMAND_AGENT, panel("mean", "    pass_score: 0.6\n")))
                .contains("{\"name\":\"e\",\"kind\":\"panel\",\"judges\":[{\"name\":\"a\",\"url\":"
                        + "\"http://127.0.0.1:9001/v1\",\"model\":\"m1\",")
                .contains("{\"name\":\"b\",\"url\":\"http://127.0.0.1:9002/v1\"")
                .contains("],\"aggregate\":\"mean\",\"pass_score\":0.6}");
        assertThat(canonical(COMMAND_AGENT, panel("majority", "")))
                .contains("\"aggregate\":\"majority\",\"pass_score\":null}");
        assertThat(canonical(COMMAND_AGENT, panel("min", ""))).contains("\"aggregate\":\"min\",\"pass_score\":0.5}");
    }

    @Test
    void aBadPanelIsALocatedProblem() {
        assertThat(problems(COMMAND_AGENT, panel("majority", "    pass_score: 0.6\n")))
                .containsExactly("p.yaml:7:17: evaluators[0].pass_score: is for mean and min; majority passes when"
                        + " more than half of the judges pass (each at its own pass_score): remove it");
        assertThat(problems(COMMAND_AGENT, panel("median", "")))
                .containsExactly(
                        "p.yaml:6:16: evaluators[0].aggregate: unknown aggregate \"median\"; use mean, min or majority");
        assertThat(problems(COMMAND_AGENT, panel("mean", "").replace("name: b", "name: a")))
                .containsExactly("p.yaml:9:16: evaluators[0].judges[1].name: duplicate judge name \"a\"; names must"
                        + " be unique");
        String one = "  - name: e\n    kind: panel\n    aggregate: mean\n    judges:\n"
                + "      - {name: a, url: 'http://h/v1', model: m, rubric: '{{nope}}', scale: {min: 0, max: 1}}\n";
        assertThat(problems(COMMAND_AGENT, one))
                .containsExactly(
                        "p.yaml:8:7: evaluators[0].judges: has 1 judges; a panel has 2..16",
                        "p.yaml:8:57: evaluators[0].judges[0].rubric: unknown placeholder {{nope}}; known: {{input}},"
                                + " {{output}}, {{expected}}, {{case.id}}, {{metadata.KEY}}");
    }

    @Test
    void theExampleProfileIsValid() {
        Path root = Path.of("").toAbsolutePath();
        while (!Files.exists(root.resolve("examples/judge-profile.yaml"))) {
            root = root.getParent();
            assertThat(root)
                    .as("examples/judge-profile.yaml above the working directory")
                    .isNotNull();
        }
        Profile p =
                ProfileInput.file(root.resolve("examples/judge-profile.yaml")).parse();
        assertThat(p.evaluators())
                .extracting(Profile.Evaluator::kind)
                .containsExactly(Profile.EvaluatorKind.JUDGE, Profile.EvaluatorKind.PANEL);
    }

    @Test
    void aPanelJudgeThatIsTheAgentIsRefused() {
        String p = panel("mean", "")
                .replace(
                        "'http://127.0.0.1:9001/v1', model: m1",
                        "'http://127.0.0.1:8000/v1/chat/completions', model: agent-model");
        assertThat(problems(HTTP_AGENT, p))
                .singleElement()
                .asString()
                .contains("evaluators[0].judges[0]: judges the agent with itself");
    }
}
