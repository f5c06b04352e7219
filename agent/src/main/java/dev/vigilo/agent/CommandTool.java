package dev.vigilo.agent;

import dev.vigilo.agent.sandbox.SandboxAttempt;
import dev.vigilo.llm.ChatTool;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A tool that runs a program per call ({@code command} of an agent's {@code tools} entry): the arguments JSON on
 * stdin, the result is stdout (at most {@link #MAX_STDOUT_BYTES}, decoded as UTF-8 with bad bytes replaced). Exit
 * status 0 is a result; another status, a timeout (the process is killed with its whole tree, as agent commands
 * are) or a program that cannot be started is an error result, with the end of its stderr. Thread-safe and stateless.
 */
final class CommandTool implements Tool {
    /** The most stdout a tool call may print. */
    static final int MAX_STDOUT_BYTES = 1 << 20;

    private final ChatTool definition;
    private final List<String> argv;
    private final Duration timeout;
    private final Map<String, String> profileEnv;
    private final AgentEnvironment env;

    CommandTool(
            ChatTool definition,
            List<String> argv,
            Duration timeout,
            Map<String, String> profileEnv,
            AgentEnvironment env) {
        this.definition = definition;
        this.argv = List.copyOf(argv);
        this.timeout = timeout;
        this.profileEnv = Map.copyOf(profileEnv);
        this.env = env;
    }

    @Override
    public ChatTool definition() {
        return definition;
    }

    /** The configured {@code timeout_seconds}. */
    Duration timeout() {
        return timeout;
    }

    @Override
    public ToolResult call(String arguments, Duration limit, Optional<SandboxAttempt> sandbox) {
        Map<String, String> childEnv = new HashMap<>(env.variables());
        childEnv.putAll(profileEnv);
        childEnv.put("VIGILO_TOOL", definition.name());
        Duration bound = limit.compareTo(timeout) < 0 ? limit : timeout;
        // In a sandbox the tool runs as the agent's commands do: in the case's work directory, wrapped.
        List<String> command = sandbox.map(x -> x.wrap(argv, childEnv.keySet())).orElse(argv);
        ChildProcess.Result r = ChildProcess.run(new ChildProcess.Spec(
                command,
                childEnv,
                sandbox.map(SandboxAttempt::launchDirectory).orElse(env.workingDirectory()),
                arguments.getBytes(StandardCharsets.UTF_8),
                bound,
                MAX_STDOUT_BYTES,
                env.secrets()));
        String tool = "tool " + definition.name();
        return switch (r.ending()) {
            case NOT_STARTED ->
                ToolResult.error(
                        tool + ": its command " + Texts.command(argv) + " cannot be started: " + r.startProblem());
            case CANCELLED -> ToolResult.cancelledCall(tool + " was cancelled (the worker was interrupted)");
            case TIMED_OUT ->
                ToolResult.error(
                        tool + " did not finish within " + Texts.seconds(bound) + " and was killed" + stderr(r));
            case STDOUT_OVERFLOW ->
                ToolResult.error(tool + " printed more than " + Texts.bytes(MAX_STDOUT_BYTES) + " and was killed");
            case EXITED ->
                r.exitCode() == 0
                        ? ToolResult.ok(new String(r.stdout(), StandardCharsets.UTF_8))
                        : ToolResult.error(tool + " exited with status " + r.exitCode() + stderr(r));
        };
    }

    private static String stderr(ChildProcess.Result r) {
        String tail = Texts.tail(r.stderrTail(), 300);
        return tail.isEmpty() ? "" : "; stderr ends: " + tail;
    }

    @Override
    public String toString() {
        return "CommandTool[" + definition.name() + ", " + Texts.command(argv) + "]";
    }
}
