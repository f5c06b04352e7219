package dev.vigilo.agent;

import com.fasterxml.jackson.databind.JsonNode;
import dev.vigilo.agent.sandbox.SandboxAttempt;
import dev.vigilo.common.concurrent.Threads;
import dev.vigilo.config.CompiledSchema;
import dev.vigilo.llm.ChatTool;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * The tools of an http agent (docs/formats/agent-protocol.md, "Tools"): their definitions for the request, and the
 * execution of the calls of one answer. A call names a tool and gives its arguments as JSON text; a call of an
 * unknown tool, or with arguments that are not one JSON value or do not satisfy the tool's schema, is not run: it is
 * an error result naming the problem, for the model to correct, as MCP servers answer. With parallel calls the
 * answer's calls run at once on the set's own daemon threads ({@link Threads}); results are always in call order.
 * Thread-safe; close it with its agent.
 */
final class ToolSet implements AutoCloseable {
    /** The most calls one answer may make; an answer with more gets an error result for each. */
    static final int MAX_CALLS_PER_ANSWER = 64;

    /** An agent without tools. */
    static final ToolSet NONE = new ToolSet(List.of(), false);

    /** One call of an answer: its id (the answer's, or one assigned), the tool's name and the arguments text. */
    record Call(String id, String name, String arguments) {}

    private final Map<String, Tool> tools = new LinkedHashMap<>();
    private final Map<String, CompiledSchema> schemas = new LinkedHashMap<>();
    private final boolean parallel;
    private final ExecutorService executor;

    /** {@code tools} have unique names (the profile reader and {@link Agents} check it). */
    ToolSet(List<Tool> tools, boolean parallel) {
        for (Tool t : tools) {
            ChatTool d = t.definition();
            if (this.tools.put(d.name(), t) != null) {
                throw new IllegalArgumentException("duplicate tool name " + d.name());
            }
            schemas.put(d.name(), CompiledSchema.compile(d.parameters()));
        }
        this.parallel = parallel;
        this.executor = parallel && tools.size() > 0
                ? Executors.newCachedThreadPool(Threads.daemonFactory("agent-tool"))
                : null;
    }

    /** The tools, in the profile's order. */
    List<Tool> tools() {
        return List.copyOf(tools.values());
    }

    boolean isEmpty() {
        return tools.isEmpty();
    }

    /** The function definitions offered in every request, in the profile's order. */
    List<ChatTool> definitions() {
        return tools.values().stream().map(Tool::definition).toList();
    }

    /** Whether the calls of one answer may run at once. */
    boolean parallel() {
        return parallel;
    }

    /**
     * Runs the calls of one answer, each bounded by {@code timeLeft} (and its tool's own timeout), and returns their
     * results in call order. Interrupting the calling thread stops the calls still running and returns at once with
     * their results {@link ToolResult#cancelled() cancelled}.
     */
    List<ToolResult> run(List<Call> calls, Duration timeLeft, Optional<SandboxAttempt> sandbox) {
        if (calls.size() > MAX_CALLS_PER_ANSWER) {
            // Not run at all: one answer asking for so many processes is a runaway, and the model should be told.
            return calls.stream()
                    .map(c -> ToolResult.error("not called: the answer made " + calls.size() + " tool calls, more than"
                            + " the " + MAX_CALLS_PER_ANSWER + " one answer may make; make fewer calls at a time"))
                    .toList();
        }
        if (executor == null || calls.size() < 2) {
            List<ToolResult> out = new ArrayList<>();
            for (Call c : calls) {
                if (Thread.currentThread().isInterrupted()) {
                    out.add(ToolResult.cancelledCall(
                            "tool " + c.name() + " was not called: the worker was interrupted"));
                } else {
                    out.add(one(c, timeLeft, sandbox));
                }
            }
            return out;
        }
        List<Future<ToolResult>> futures = new ArrayList<>();
        for (Call c : calls) {
            futures.add(executor.submit(() -> one(c, timeLeft, sandbox)));
        }
        List<ToolResult> out = new ArrayList<>();
        for (int i = 0; i < calls.size(); i++) {
            try {
                out.add(futures.get(i).get());
            } catch (InterruptedException e) {
                futures.forEach(f -> f.cancel(true));
                Thread.currentThread().interrupt();
                for (int j = i; j < calls.size(); j++) {
                    out.add(ToolResult.cancelledCall(
                            "tool " + calls.get(j).name() + " was cancelled (the worker was interrupted)"));
                }
                return out;
            } catch (ExecutionException e) {
                // A tool's own failures are results; this is a fault of the tool's code, reported to the model too.
                out.add(ToolResult.error("tool " + calls.get(i).name() + " failed: " + e.getCause()));
            }
        }
        return out;
    }

    /** One call: checked, then run. */
    private ToolResult one(Call c, Duration timeLeft, Optional<SandboxAttempt> sandbox) {
        Tool tool = tools.get(c.name());
        if (tool == null) {
            return ToolResult.error("unknown tool \"" + Texts.oneLine(c.name(), 80) + "\"; the tools are: "
                    + String.join(", ", tools.keySet()));
        }
        // No arguments at all is the empty object: some endpoints send "" for a function without parameters.
        String text = c.arguments().isBlank() ? "{}" : c.arguments();
        JsonNode args;
        try {
            args = Json.parse(text);
        } catch (IOException e) {
            return ToolResult.error("the arguments of tool " + c.name() + " are not valid JSON: " + Json.problem(e)
                    + "; give one JSON object matching the tool's parameters");
        }
        var violations = schemas.get(c.name()).violations(args);
        if (violations.isPresent()) {
            return ToolResult.error(
                    "the arguments of tool " + c.name() + " do not match its parameters schema: " + violations.get());
        }
        return tool.call(text, timeLeft, sandbox);
    }

    @Override
    public void close() {
        if (executor != null) {
            executor.shutdownNow();
        }
    }
}
