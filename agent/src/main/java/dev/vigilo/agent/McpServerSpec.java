package dev.vigilo.agent;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * One entry of an http agent's {@code mcp_servers} (docs/formats/agent-protocol.md, "MCP servers"): a server started
 * per attempt over stdio, whose tools are offered beside the command tools.
 *
 * @param name    the server's name in the profile (for messages)
 * @param argv    the command that starts it (stdio transport)
 * @param env     variables added to its environment
 * @param timeout the most one {@code tools/call} (and its start: initialize and tools/list) may take
 */
record McpServerSpec(String name, List<String> argv, Map<String, String> env, Duration timeout) {
    McpServerSpec {
        Objects.requireNonNull(name, "name");
        argv = List.copyOf(argv);
        env = Map.copyOf(env);
        Objects.requireNonNull(timeout, "timeout");
    }
}
