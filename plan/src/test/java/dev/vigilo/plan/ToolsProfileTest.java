package dev.vigilo.plan;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/** An http agent's tools and the tool_use evaluator in a profile: validated with locations, canonical when given. */
class ToolsProfileTest {
    static final String TOOLS = "  tools:\n"
            + "    - name: calculator\n"
            + "      description: Adds two numbers.\n"
            + "      parameters: {type: object, properties: {b: {type: number}, a: {type: number}}, required: [a, b]}\n"
            + "      command: [python3, tools/calc.py]\n";

    static String profile(String agentExtra, String evaluators) {
        return "name: p\nagent:\n  kind: http\n  url: 'http://h/v1'\n  model: m\n" + agentExtra + "evaluators:\n"
                + evaluators + "gates: [{name: g, required_evaluators: [e], min_pass_rate: 1}]\n";
    }

    static String profile(String agentExtra) {
        return profile(agentExtra, "  - {name: e, kind: exact_match}\n");
    }

    static List<String> problems(String text) {
        try {
            ProfileParser.parse(text.getBytes(StandardCharsets.UTF_8), "p.yaml");
        } catch (ProfileException e) {
            return e.problems();
        }
        throw new AssertionError("the profile was accepted");
    }

    static String canonical(String text) {
        return new String(ProfileJson.encode(ProfileParser.parse(text)), StandardCharsets.UTF_8);
    }

    @Test
    void theExampleProfileIsValid() {
        Path root = Path.of("").toAbsolutePath();
        while (!Files.exists(root.resolve("examples/tools-profile.yaml"))) {
            root = root.getParent();
            assertThat(root)
                    .as("examples/tools-profile.yaml above the working directory")
                    .isNotNull();
        }
        Profile p =
                ProfileInput.file(root.resolve("examples/tools-profile.yaml")).parse();
        assertThat(p.agent().parameters().path("tools").get(0).path("name").asText())
                .isEqualTo("calculator");
        assertThat(p.agent().parameters().path("max_turns").asInt()).isEqualTo(6);
        assertThat(p.evaluators())
                .extracting(Profile.Evaluator::kind)
                .containsExactly(Profile.EvaluatorKind.NUMERIC, Profile.EvaluatorKind.TOOL_USE);
    }

    @Test
    void theMcpExampleProfileIsValid() {
        Path root = Path.of("").toAbsolutePath();
        while (!Files.exists(root.resolve("examples/mcp-profile.yaml"))) {
            root = root.getParent();
            assertThat(root)
                    .as("examples/mcp-profile.yaml above the working directory")
                    .isNotNull();
        }
        Profile p = ProfileInput.file(root.resolve("examples/mcp-profile.yaml")).parse();
        assertThat(p.agent()
                        .parameters()
                        .path("mcp_servers")
                        .get(0)
                        .path("command")
                        .toString())
                .isEqualTo("[\"python3\",\"examples/tools/calc_mcp_server.py\"]");
        assertThat(p.agent().parameters().has("tools")).isFalse();
    }

    @Test
    void toolsAreWrittenWithTheirDefaultsAndChangeTheIdentity() {
        assertThat(canonical(profile(TOOLS)))
                .contains("\"tools\":[{\"name\":\"calculator\",\"description\":\"Adds two numbers.\","
                        + "\"parameters\":{\"properties\":{\"a\":{\"type\":\"number\"},\"b\":{\"type\":\"number\"}},"
                        + "\"required\":[\"a\",\"b\"],\"type\":\"object\"},\"command\":[\"python3\",\"tools/calc.py\"],"
                        + "\"timeout_seconds\":30,\"env\":{}}],\"max_turns\":10,\"parallel_tool_calls\":true");
        assertThat(canonical(profile(""))).doesNotContain("tools").doesNotContain("max_turns");
        assertThat(ProfileJson.sha256(ProfileParser.parse(profile(TOOLS))))
                .isNotEqualTo(ProfileJson.sha256(ProfileParser.parse(profile(""))));
    }

    @Test
    void badToolsAreProblemsAtTheirLocation() {
        assertThat(problems(profile(TOOLS + "    - {name: calculator, command: [x]}\n")))
                .containsExactly("p.yaml:11:14: agent.tools[1].name: duplicate tool name \"calculator\"; tool names"
                        + " must be unique");
        assertThat(problems(profile("  tools: [{name: 'a b', command: [x]}]\n")))
                .singleElement()
                .asString()
                .contains("agent.tools[0].name: \"a b\" is not a valid tool name");
        assertThat(problems(profile("  tools: [{name: t, command: [x], parameters: {type: 7}}]\n")))
                .singleElement()
                .asString()
                .contains("agent.tools[0].parameters: is not a usable JSON Schema");
        assertThat(problems(profile("  tools: [{name: t, command: [x], parameters: {type: string}}]\n")))
                .singleElement()
                .asString()
                .contains("agent.tools[0].parameters: must be a schema of type: object");
        assertThat(problems(profile("  tools: [{name: t}]\n")))
                .singleElement()
                .asString()
                .contains("agent.tools[0].command: is required");
        assertThat(problems(profile("  tools: [{name: t, command: [x], timeout: 3}]\n")))
                .singleElement()
                .asString()
                .contains("agent.tools[0].timeout: unknown key");
        assertThat(problems(profile(TOOLS + "  max_turns: 0\n")))
                .singleElement()
                .asString()
                .contains("agent.max_turns: ")
                .contains("1")
                .contains("1000");
        assertThat(problems(profile("  max_turns: 5\n")))
                .singleElement()
                .asString()
                .contains("agent.max_turns: is for an agent with tools");
        assertThat(problems(profile(TOOLS + "  cache: true\n")))
                .singleElement()
                .asString()
                .contains("agent.cache: cannot be used with tools");
    }

    @Test
    void toolUseEvaluatorsAreCheckedAgainstTheAgentsTools() {
        String ok = "  - name: e\n    kind: tool_use\n    require: [{name: calculator, arguments: {a: 17}}]\n"
                + "    max_calls: 4\n";
        assertThat(canonical(profile(TOOLS, ok)))
                .contains("\"kind\":\"tool_use\",\"require\":[{\"name\":\"calculator\",\"arguments\":{\"a\":17}}],"
                        + "\"forbid\":[],\"max_calls\":4,\"ordered\":false");
        assertThat(problems(profile(TOOLS, "  - {name: e, kind: tool_use, forbid: [delete_file]}\n")))
                .singleElement()
                .asString()
                .contains("evaluators[0].forbid[0]: the agent has no tool \"delete_file\"; its tools are: calculator");
        assertThat(problems(profile(TOOLS, "  - {name: e, kind: tool_use}\n")))
                .singleElement()
                .asString()
                .contains("evaluators[0]: needs require, forbid or max_calls");
        assertThat(problems(profile(
                        TOOLS, "  - {name: e, kind: tool_use, require: [{name: calculator}], forbid: [calculator]}\n")))
                .singleElement()
                .asString()
                .contains("evaluators[0].forbid[0]: \"calculator\" is also required");
        assertThat(problems(
                        profile(TOOLS, "  - {name: e, kind: tool_use, require: [{name: calculator, arguments: 3}]}\n")))
                .singleElement()
                .asString()
                .contains("evaluators[0].require[0].arguments: must be a mapping");
        // A command agent may call any tool: names are not checked against a list.
        String command = "name: p\nagent: {kind: command, command: [x]}\nevaluators:\n"
                + "  - {name: e, kind: tool_use, forbid: [rm], ordered: true}\n"
                + "gates: [{name: g, required_evaluators: [e], min_pass_rate: 1}]\n";
        assertThat(canonical(command)).contains("\"forbid\":[\"rm\"],\"max_calls\":null,\"ordered\":true");
    }

    static final String MCP = "  mcp_servers:\n"
            + "    - name: files\n"
            + "      command: [java, -jar, server.jar]\n"
            + "      env: {ROOT: /data}\n";

    @Test
    void mcpServersAreWrittenOnlyWhenGivenWithTheirDefaults() {
        assertThat(canonical(profile(MCP)))
                .contains("\"mcp_servers\":[{\"name\":\"files\",\"command\":[\"java\",\"-jar\",\"server.jar\"],"
                        + "\"env\":{\"ROOT\":\"/data\"},\"timeout_seconds\":60}],\"max_turns\":10,"
                        + "\"parallel_tool_calls\":true")
                .doesNotContain("\"tools\"");
        assertThat(canonical(profile(TOOLS))).doesNotContain("mcp_servers");
        assertThat(canonical(profile(TOOLS + MCP))).contains("\"tools\":[").contains("\"mcp_servers\":[");
        // Its tools are known only at run time: a tool_use evaluator may name any.
        assertThat(canonical(profile(TOOLS + MCP, "  - {name: e, kind: tool_use, forbid: [delete_file]}\n")))
                .contains("\"forbid\":[\"delete_file\"]");
    }

    @Test
    void badMcpServersAreProblemsAtTheirLocation() {
        assertThat(problems(profile(MCP + "    - {name: files, command: [x]}\n")))
                .singleElement()
                .asString()
                .contains("agent.mcp_servers[1].name: duplicate MCP server name \"files\"");
        assertThat(problems(profile("  mcp_servers: [{name: 'a b', command: [x], timeout_seconds: 0, url: u}]\n")))
                .anySatisfy(p -> assertThat(p).contains("agent.mcp_servers[0].name: \"a b\" is not a valid MCP server"))
                .anySatisfy(p -> assertThat(p).contains("agent.mcp_servers[0].timeout_seconds"))
                .anySatisfy(p -> assertThat(p).contains("agent.mcp_servers[0]").contains("url"));
        assertThat(problems(profile("  mcp_servers: [{name: s}]\n")))
                .singleElement()
                .asString()
                .contains("agent.mcp_servers[0].command");
        assertThat(problems(profile("  mcp_servers: {name: s}\n")))
                .singleElement()
                .asString()
                .contains("agent.mcp_servers");
    }
}
