package dev.vigilo.plan;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/** An http agent's messages template in a profile: validated with locations, canonical only when given. */
class AgentMessagesProfileTest {
    static String profile(String agentExtra) {
        return "name: p\nagent:\n  kind: http\n  url: 'http://h/v1'\n  model: m\n" + agentExtra
                + "evaluators: [{name: e, kind: exact_match}]\n"
                + "gates: [{name: g, required_evaluators: [e], min_pass_rate: 1}]\n";
    }

    static List<String> problems(String agentExtra) {
        try {
            ProfileParser.parse(profile(agentExtra).getBytes(StandardCharsets.UTF_8), "p.yaml");
        } catch (ProfileException e) {
            return e.problems();
        }
        throw new AssertionError("the profile was accepted");
    }

    static String canonical(String agentExtra) {
        return new String(ProfileJson.encode(ProfileParser.parse(profile(agentExtra))), StandardCharsets.UTF_8);
    }

    @Test
    void messagesAreWrittenAsGivenInOrder() {
        String messages = "  messages:\n"
                + "    - {role: system, content: 'Answer in {{metadata.lang}}.'}\n"
                + "    - {role: user, content: \"Q: {{ input.question }} ({{case.id}})\"}\n"
                + "    - {role: assistant, content: OK}\n"
                + "    - {role: user, content: '{{input}}'}\n";
        assertThat(canonical(messages))
                .contains(
                        "\"model\":\"m\",\"api_key_env\":null,\"timeout_seconds\":120,\"connect_timeout_seconds\":10,"
                                + "\"messages\":[{\"role\":\"system\",\"content\":\"Answer in {{metadata.lang}}.\"},"
                                + "{\"role\":\"user\",\"content\":\"Q: {{ input.question }} ({{case.id}})\"},"
                                + "{\"role\":\"assistant\",\"content\":\"OK\"},{\"role\":\"user\",\"content\":\"{{input}}\"}]}");
        assertThat(ProfileJson.sha256(ProfileParser.parse(profile(messages))))
                .isNotEqualTo(ProfileJson.sha256(ProfileParser.parse(profile(""))));
    }

    @Test
    void aProfileWithoutMessagesKeepsItsCanonicalBytesAndIdentity() {
        // Pinned from the profile reader before messages existed.
        Profile p = ProfileParser.parse(profile("  system_prompt: Be brief.\n  max_tokens: 64\n"));
        assertThat(new String(ProfileJson.encode(p), StandardCharsets.UTF_8)).isEqualTo(CANONICAL);
        assertThat(ProfileJson.sha256(p).toHex()).isEqualTo(CANONICAL_SHA256);
    }

    @Test
    void badTemplatesAreProblemsAtTheirLocation() {
        assertThat(problems("  messages: [{role: user, content: 'Grade {{output}} against {{expected}}'}]\n"))
                .containsExactly(
                        "p.yaml:6:36: agent.messages[0].content: unknown placeholder {{output}}: use {{input}},"
                                + " {{input.FIELD}}, {{metadata.KEY}} or {{case.id}}",
                        "p.yaml:6:36: agent.messages[0].content: unknown placeholder {{expected}}: use {{input}},"
                                + " {{input.FIELD}}, {{metadata.KEY}} or {{case.id}}");
        assertThat(problems("  messages: [{role: user, content: '{{input.a.b}}'}]\n"))
                .singleElement()
                .asString()
                .contains("agent.messages[0].content: unknown placeholder {{input.a.b}}");
        assertThat(problems("  messages: [{role: tool, content: x}]\n"))
                .containsExactly(
                        "p.yaml:6:21: agent.messages[0].role: unknown role \"tool\"; use system, user or assistant");
        assertThat(problems("  messages: [{role: system, content: x}]\n"))
                .containsExactly("p.yaml:6:13: agent.messages: needs at least one user message (role: user)");
        assertThat(problems("  messages: [{role: user}]\n"))
                .containsExactly("p.yaml:6:14: agent.messages[0].content: is required");
        assertThat(problems("  messages: [{role: user, content: x, name: n}]\n"))
                .singleElement()
                .asString()
                .contains("agent.messages[0].name: unknown key; allowed here: role, content");
        assertThat(problems("  messages: []\n"))
                .singleElement()
                .asString()
                .contains("agent.messages: is empty; give at least one message");
        assertThat(problems("  messages: hello\n"))
                .singleElement()
                .asString()
                .contains("agent.messages: must be a list, got a string");
    }

    @Test
    void messagesAndSystemPromptAreExclusive() {
        assertThat(problems("  system_prompt: s\n  messages: [{role: user, content: '{{input}}'}]\n"))
                .containsExactly("p.yaml:7:13: agent.messages: is given beside system_prompt; put the system prompt in"
                        + " messages as {role: system, content: ...} and remove system_prompt");
    }

    static final String CANONICAL =
            "{\"version\":1,\"name\":\"p\",\"agent\":{\"kind\":\"http\",\"url\":\"http://h/v1\",\"model\":\"m\",\"api_key_en"
                    + "v\":null,\"timeout_seconds\":120,\"connect_timeout_seconds\":10,\"max_tokens\":64,\"system_prompt\""
                    + ":\"Be brief.\"},\"evaluators\":[{\"name\":\"e\",\"kind\":\"exact_match\",\"case_sensitive\":true,\"trim\":"
                    + "true}],\"gates\":[{\"name\":\"g\",\"required_evaluators\":[\"e\"],\"min_pass_rate\":1.0}],\"limits\":{\"m"
                    + "ax_cases\":10000000}}";
    static final String CANONICAL_SHA256 = "65854655fc4a2f83c28f43e85933fa40f91c983d4ba208c33e144e952999aeeb";
}
