package dev.vigilo.agent;

import com.fasterxml.jackson.databind.JsonNode;
import dev.vigilo.agent.sandbox.SandboxAttempt;
import dev.vigilo.common.concurrent.Threads;
import dev.vigilo.common.process.ProcessTree;
import dev.vigilo.config.CompiledSchema;
import dev.vigilo.llm.ChatTool;
import io.modelcontextprotocol.client.McpAsyncClient;
import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.transport.ServerParameters;
import io.modelcontextprotocol.client.transport.StdioClientTransport;
import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.spec.McpError;
import io.modelcontextprotocol.spec.McpSchema;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import reactor.core.publisher.Mono;

/**
 * One MCP server of an attempt (docs/formats/agent-protocol.md, "MCP servers"), through the official MCP Java SDK
 * over stdio: started (wrapped in the case's sandbox when there is one), initialised and its tools listed by
 * {@link #start}; each of its tools is a {@link Tool} whose calls are {@code tools/call} requests; {@link #close}
 * stops it gracefully, then kills whatever it started ({@link ProcessTree}). The end of its stderr is kept (in
 * memory, bounded) and quoted (secrets masked) when it fails. Thread-safe.
 */
final class McpServer implements AutoCloseable {
    /** How much of the server's stderr is kept for messages. */
    static final int STDERR_TAIL_CHARS = 2048;
    /** How long a call whose connection broke waits for the server's exit to be seen. */
    private static final long EXIT_GRACE_MS = 1_000;

    /** A server that could not be started, initialised or listed, or that died: the attempt's error. */
    static final class Failure extends Exception {
        private static final long serialVersionUID = 1L;

        Failure(String message) {
            super(message);
        }
    }

    private final McpServerSpec spec;
    private final ProcessTree tree;
    private final StringBuilder stderr;
    private final AgentEnvironment env;
    private final McpAsyncClient client;
    private final CompletableFuture<Void> exited;
    private final McpJsonMapper mapper = McpJsonDefaults.getMapper();
    private volatile List<Tool> tools = List.of();

    private McpServer(
            McpServerSpec spec,
            ProcessTree tree,
            StringBuilder stderr,
            AgentEnvironment env,
            McpAsyncClient client,
            Transport transport) {
        this.spec = spec;
        this.tree = tree;
        this.stderr = stderr;
        this.env = env;
        this.client = client;
        this.exited = transport.exited;
    }

    /**
     * The SDK's stdio transport, started in the given directory with exactly the given environment; {@link #exited}
     * completes when the process ends.
     */
    private static final class Transport extends StdioClientTransport {
        private final Path directory;
        final CompletableFuture<Void> exited = new CompletableFuture<>();

        Transport(ServerParameters params, Path directory) {
            super(params, McpJsonDefaults.getMapper());
            this.directory = directory;
        }

        @Override
        protected ProcessBuilder getProcessBuilder() {
            // The SDK sets the command and adds the parameters' environment (the whole environment, see start).
            ProcessBuilder b = new ProcessBuilder().directory(directory.toFile());
            b.environment().clear();
            return b;
        }

        @Override
        public Mono<Void> connect(Function<Mono<McpSchema.JSONRPCMessage>, Mono<McpSchema.JSONRPCMessage>> handler) {
            // Once connected the process exists: watch for its end (a server that dies fails what waits on it).
            return super.connect(handler)
                    .doOnError(exited::completeExceptionally)
                    .doOnSuccess(v -> Threads.startDaemon("mcp-server-exit", () -> {
                        awaitForExit();
                        exited.complete(null);
                    }));
        }
    }

    /**
     * Starts the server, initialises it and lists its tools, within {@code limit} (and the spec's timeout).
     *
     * @throws Failure naming the server and quoting its stderr; nothing of it is left running then
     */
    static McpServer start(McpServerSpec spec, AgentEnvironment env, Optional<SandboxAttempt> sandbox, Duration limit)
            throws Failure {
        Map<String, String> childEnv = new HashMap<>(env.variables());
        childEnv.putAll(spec.env());
        childEnv.put("VIGILO_MCP_SERVER", spec.name());
        ProcessTree tree = ProcessTree.tag(childEnv);
        List<String> argv =
                sandbox.map(x -> x.wrap(spec.argv(), childEnv.keySet())).orElse(spec.argv());
        StringBuilder stderr = new StringBuilder();
        Transport transport = new Transport(
                ServerParameters.builder(argv.get(0))
                        .args(argv.subList(1, argv.size()))
                        .env(childEnv)
                        .build(),
                sandbox.map(SandboxAttempt::launchDirectory).orElse(env.workingDirectory()));
        transport.setStdErrorHandler(line -> {
            synchronized (stderr) {
                stderr.append(line).append('\n');
                if (stderr.length() > 2 * STDERR_TAIL_CHARS) {
                    stderr.delete(0, stderr.length() - STDERR_TAIL_CHARS);
                }
            }
        });
        Duration bound = limit.compareTo(spec.timeout()) < 0 ? limit : spec.timeout();
        McpAsyncClient client = McpClient.async(transport)
                .requestTimeout(spec.timeout())
                .initializationTimeout(bound)
                .clientInfo(new McpSchema.Implementation("vigilo", "1"))
                .jsonSchemaValidator(new McpSchemaValidator())
                .build();
        McpServer server = new McpServer(spec, tree, stderr, env, client, transport);
        try {
            server.await(client.initialize().toFuture(), bound, "initialize");
            McpSchema.ListToolsResult listed = server.await(client.listTools().toFuture(), bound, "tools/list");
            List<Tool> tools = new ArrayList<>();
            for (McpSchema.Tool t : listed.tools()) {
                tools.add(server.tool(t));
            }
            server.tools = List.copyOf(tools);
            return server;
        } catch (Failure | RuntimeException e) {
            server.close();
            throw e;
        }
    }

    /** The tools it listed, in its order. */
    List<Tool> tools() {
        return tools;
    }

    /** Why the server is no longer usable (it exited), with its stderr tail; empty while it runs. */
    Optional<String> failure() {
        if (!exited.isDone()) {
            return Optional.empty();
        }
        return Optional.of("MCP server " + spec.name() + " (" + Texts.command(spec.argv()) + ") exited during the"
                + " attempt" + stderrTail());
    }

    private <T> T await(CompletableFuture<T> future, Duration bound, String what) throws Failure {
        try {
            CompletableFuture.anyOf(future, exited).get(bound.toNanos(), TimeUnit.NANOSECONDS);
            if (!future.isDone()) {
                throw new Failure("MCP server " + spec.name() + " (" + Texts.command(spec.argv()) + ") exited before"
                        + " answering " + what + stderrTail());
            }
            return future.get();
        } catch (TimeoutException e) {
            throw new Failure("MCP server " + spec.name() + " did not answer " + what + " within "
                    + Texts.seconds(bound) + stderrTail());
        } catch (ExecutionException e) {
            throw new Failure("MCP server " + spec.name() + " (" + Texts.command(spec.argv()) + ") failed " + what
                    + ": " + Texts.oneLine(env.secrets().mask(String.valueOf(rootCause(e))), 300) + stderrTail());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new Failure("MCP server " + spec.name() + ": interrupted during " + what);
        }
    }

    private static Throwable rootCause(Throwable t) {
        Throwable c = t;
        while (c.getCause() != null && c.getCause() != c) {
            c = c.getCause();
        }
        return c;
    }

    /** "; stderr ends: ..." (masked), or nothing when it printed nothing. */
    private String stderrTail() {
        String kept;
        synchronized (stderr) {
            kept = stderr.toString();
        }
        String tail = Texts.tail(env.secrets().mask(kept).strip(), 300);
        return tail.isEmpty() ? "" : "; stderr ends: " + tail;
    }

    private Tool tool(McpSchema.Tool t) throws Failure {
        JsonNode schema;
        try {
            schema = Json.parse(
                    mapper.writeValueAsString(t.inputSchema() == null ? Map.of("type", "object") : t.inputSchema()));
        } catch (IOException e) {
            throw new Failure("MCP server " + spec.name() + " listed tool " + Texts.oneLine(t.name(), 80)
                    + " with an unusable inputSchema: " + e.getMessage());
        }
        Optional<String> problem = CompiledSchema.problem(schema);
        if (problem.isPresent()) {
            throw new Failure("MCP server " + spec.name() + " listed tool " + Texts.oneLine(t.name(), 80)
                    + " with an unusable inputSchema: " + problem.get());
        }
        ChatTool definition = new ChatTool(t.name(), Optional.ofNullable(t.description()), schema);
        return new Tool() {
            @Override
            public ChatTool definition() {
                return definition;
            }

            @Override
            public ToolResult call(String arguments, Duration timeout, Optional<SandboxAttempt> sandbox) {
                return McpServer.this.call(definition.name(), arguments, timeout);
            }

            @Override
            public String toString() {
                return "McpTool[" + spec.name() + ", " + definition.name() + "]";
            }
        };
    }

    /** One {@code tools/call}: its content as text; a failure, a timeout or the server's exit is an error result. */
    private ToolResult call(String name, String arguments, Duration limit) {
        Duration bound = limit.compareTo(spec.timeout()) < 0 ? limit : spec.timeout();
        String tool = "tool " + name + " (MCP server " + spec.name() + ")";
        CompletableFuture<McpSchema.CallToolResult> call = client.callTool(
                        new McpSchema.CallToolRequest(mapper, name, arguments))
                .toFuture();
        try {
            CompletableFuture.anyOf(call, exited).get(bound.toNanos(), TimeUnit.NANOSECONDS);
            if (!call.isDone()) {
                return ToolResult.error(tool + " failed: the server exited" + stderrTail());
            }
            McpSchema.CallToolResult r = call.get();
            return new ToolResult(content(r), Boolean.TRUE.equals(r.isError()), false);
        } catch (TimeoutException e) {
            call.cancel(true);
            return ToolResult.error(tool + " did not answer within " + Texts.seconds(bound));
        } catch (ExecutionException e) {
            if (!(rootCause(e) instanceof McpError)) {
                // Not the server's answer: the connection broke, usually because the server is exiting; let the
                // attempt see that (failure()) rather than take it for one failed call.
                try {
                    exited.get(EXIT_GRACE_MS, TimeUnit.MILLISECONDS);
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                } catch (ExecutionException | TimeoutException ignored) {
                    // Still running (or never started): the call's failure is all there is.
                }
            }
            return ToolResult.error(tool + " failed: "
                    + Texts.oneLine(
                            env.secrets().mask(String.valueOf(rootCause(e).getMessage())), 300));
        } catch (InterruptedException e) {
            call.cancel(true);
            Thread.currentThread().interrupt();
            return ToolResult.cancelledCall(tool + " was cancelled (the worker was interrupted)");
        }
    }

    /** Text parts joined by newlines; another part is its JSON. */
    private String content(McpSchema.CallToolResult r) {
        List<String> parts = new ArrayList<>();
        for (McpSchema.Content c : r.content() == null ? List.<McpSchema.Content>of() : r.content()) {
            if (c instanceof McpSchema.TextContent t) {
                parts.add(t.text());
            } else {
                try {
                    parts.add(mapper.writeValueAsString(c));
                } catch (IOException e) {
                    parts.add("(a " + c.type() + " part that cannot be written as JSON)");
                }
            }
        }
        return String.join("\n", parts);
    }

    /** Stops the server: gracefully (bounded), then kills what is left of it. */
    @Override
    public void close() {
        try {
            client.closeGracefully().toFuture().get(2, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException | RuntimeException e) {
            // Killed below whatever happened.
        } finally {
            tree.reap(Optional.empty());
        }
    }

    @Override
    public String toString() {
        return "McpServer[" + spec.name() + ", " + Texts.command(spec.argv()) + "]";
    }
}
