package dev.vigilo.agent;

import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.server.McpServer;
import io.modelcontextprotocol.server.transport.StdioServerTransportProvider;
import io.modelcontextprotocol.spec.McpSchema;
import java.util.Map;

/**
 * A real MCP server over stdio, written with the same SDK as the client, for the tests of {@code mcp_servers}: run
 * as a child JVM ({@code java -cp <test classpath> dev.vigilo.agent.TestMcpServer [marker]}; the marker only lets a
 * test find the process). Tools: {@code add} {a, b} answers the sum; {@code fail} answers an error result
 * ({@code isError}); {@code pwd} answers its working directory; {@code crash} prints to stderr and ends the process with status 3.
 */
final class TestMcpServer {
    private TestMcpServer() {}

    public static void main(String[] args) throws InterruptedException {
        var mapper = McpJsonDefaults.getMapper();
        String numbers =
                "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"number\"},\"b\":{\"type\":\"number\"}},"
                        + "\"required\":[\"a\",\"b\"]}";
        McpServer.sync(new StdioServerTransportProvider(mapper))
                .serverInfo("vigilo-test-mcp", "1")
                .jsonSchemaValidator(new McpSchemaValidator())
                .capabilities(McpSchema.ServerCapabilities.builder().tools(true).build())
                .toolCall(
                        McpSchema.Tool.builder()
                                .name("add")
                                .description("Adds two numbers.")
                                .inputSchema(mapper, numbers)
                                .build(),
                        (exchange, request) -> {
                            Map<String, Object> a = request.arguments();
                            double sum = ((Number) a.get("a")).doubleValue() + ((Number) a.get("b")).doubleValue();
                            return McpSchema.CallToolResult.builder()
                                    .addTextContent(
                                            sum == Math.rint(sum) ? Long.toString((long) sum) : Double.toString(sum))
                                    .build();
                        })
                .toolCall(
                        McpSchema.Tool.builder()
                                .name("fail")
                                .description("Always fails.")
                                .inputSchema(mapper, "{\"type\":\"object\"}")
                                .build(),
                        (exchange, request) -> McpSchema.CallToolResult.builder()
                                .addTextContent(
                                        "no such file: " + System.getenv().getOrDefault("FAIL_TEXT", "x"))
                                .isError(true)
                                .build())
                .toolCall(
                        McpSchema.Tool.builder()
                                .name("pwd")
                                .description("The server's working directory.")
                                .inputSchema(mapper, "{\"type\":\"object\"}")
                                .build(),
                        (exchange, request) -> McpSchema.CallToolResult.builder()
                                .addTextContent(System.getProperty("user.dir"))
                                .build())
                .toolCall(
                        McpSchema.Tool.builder()
                                .name("crash")
                                .description("Ends the server.")
                                .inputSchema(mapper, "{\"type\":\"object\"}")
                                .build(),
                        (exchange, request) -> {
                            System.err.println("test server crashing on purpose");
                            System.err.flush();
                            Runtime.getRuntime().halt(3);
                            return null;
                        })
                .build();
        // The transport reads stdin on its own threads; the server ends when its client closes stdin or kills it.
        Thread.currentThread().join();
    }
}
