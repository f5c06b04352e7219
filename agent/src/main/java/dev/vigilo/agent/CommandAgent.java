package dev.vigilo.agent;

import com.fasterxml.jackson.databind.JsonNode;
import dev.vigilo.agent.sandbox.SandboxAttempt;
import dev.vigilo.common.errors.UnavailableException;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * The {@code command} agent (docs/formats/agent-protocol.md): one child process per attempt, the case on stdin, the
 * output on stdout, exit status 0; the call's epoch in {@code VIGILO_EPOCH}. Thread-safe and stateless between calls.
 */
final class CommandAgent implements Agent {
    /** Protocol version, given to the command as {@code VIGILO_AGENT_PROTOCOL}. */
    static final int PROTOCOL_VERSION = 1;
    /** The most stdout read: room for a 1 MiB output wrapped in JSON with some escaping. */
    static final int MAX_STDOUT_BYTES = 2 << 20;

    private final List<String> argv;
    private final Duration timeout;
    private final Map<String, String> profileEnv;
    private final AgentEnvironment env;
    private final Attempts attempts;

    CommandAgent(
            List<String> argv,
            Duration timeout,
            Map<String, String> profileEnv,
            int maxAttempts,
            AgentEnvironment env) {
        this.argv = List.copyOf(argv);
        this.timeout = timeout;
        this.profileEnv = Map.copyOf(profileEnv);
        this.env = env;
        this.attempts = new Attempts(maxAttempts, env);
    }

    @Override
    public AgentOutcome run(AgentCall call) {
        byte[] stdin = stdin(call.caseRecord().json());
        String epoch = Integer.toString(call.epoch());
        Optional<SandboxAttempt> sandbox = call.sandbox();
        return attempts.run(
                call.observer(),
                call.budget(),
                (n, observer, left) ->
                        attempt(n, epoch, stdin, observer, left.compareTo(timeout) < 0 ? left : timeout, sandbox));
    }

    /**
     * One attempt, killed with its process tree after {@code limit} (the timeout, or less when the case's time
     * ends); in {@code sandbox} when there is one, its files reset to the workdir's for every attempt after the first.
     */
    private Attempts.Result attempt(
            int n,
            String epoch,
            byte[] stdin,
            AgentObserver observer,
            Duration limit,
            Optional<SandboxAttempt> sandbox) {
        if (n > 1) {
            // A retry starts from the files the first attempt started from, not from what a failed one left.
            sandbox.ifPresent(SandboxAttempt::reset);
        }
        Path scratch = sandbox.map(SandboxAttempt::scratchDirectory).orElse(env.scratchDirectory());
        EventsFile events;
        try {
            events = EventsFile.create(scratch);
        } catch (IOException e) {
            // The worker's own scratch space failing is not the agent's fault: the caller's retry path handles it.
            throw new UnavailableException(
                    "cannot create the agent's events file in " + scratch + ": " + e.getMessage()
                            + "; check that the scratch directory exists and is writable",
                    e);
        }
        try {
            Map<String, String> childEnv = new HashMap<>(env.variables());
            childEnv.putAll(profileEnv);
            childEnv.put("VIGILO_AGENT_PROTOCOL", Integer.toString(PROTOCOL_VERSION));
            childEnv.put("VIGILO_ATTEMPT", Integer.toString(n));
            // Always set ("1" without epochs), so an agent need not tell an absent variable from the first epoch.
            childEnv.put("VIGILO_EPOCH", epoch);
            // Inside a sandbox the file is in its private /tmp, under the path the command sees.
            childEnv.put(
                    "VIGILO_EVENTS",
                    sandbox.map(s -> s.inside(events.path()))
                            .orElse(events.path().toString()));
            List<String> command =
                    sandbox.map(s -> s.wrap(argv, childEnv.keySet())).orElse(argv);
            Path directory = sandbox.map(SandboxAttempt::launchDirectory).orElse(env.workingDirectory());
            ChildProcess.Result r = ChildProcess.run(
                    new ChildProcess.Spec(command, childEnv, directory, stdin, limit, MAX_STDOUT_BYTES, env.secrets()));
            List<AgentToolCall> calls = new ArrayList<>();
            if (r.ending() != ChildProcess.Ending.CANCELLED && r.ending() != ChildProcess.Ending.NOT_STARTED) {
                events.deliver(event -> {
                    toolCall(event).ifPresent(calls::add);
                    observer.onEvent(n, event);
                });
            }
            return result(r).withToolCalls(calls);
        } finally {
            events.delete();
        }
    }

    private Attempts.Result result(ChildProcess.Result r) {
        String cmd = Texts.command(argv);
        return switch (r.ending()) {
            case NOT_STARTED ->
                Attempts.Result.failed(AgentError.of(
                        AgentErrorType.AGENT_NOT_FOUND,
                        "agent command " + cmd + " cannot be started: " + r.startProblem() + "; check agent.command[0]"
                                + " (looked up on the worker's PATH; a relative path is relative to "
                                + env.workingDirectory() + ")"));
            case CANCELLED ->
                Attempts.Result.failed(AgentError.of(
                        AgentErrorType.CANCELLED,
                        "agent command " + cmd + " was cancelled (the worker was interrupted) and killed"));
            case TIMED_OUT ->
                Attempts.Result.failed(AgentError.of(
                        AgentErrorType.TIMEOUT,
                        r.exited()
                                ? "agent command " + cmd + " exited, but a process it started still held its stdout"
                                        + " open after " + timeout.toSeconds() + " s; do not leave background"
                                        + " processes attached to stdout" + stderr(r)
                                : "agent command " + cmd + " did not finish within " + timeout.toSeconds() + " s and"
                                        + " was killed; raise agent.timeout_seconds or make the agent faster"
                                        + stderr(r)));
            case STDOUT_OVERFLOW ->
                Attempts.Result.failed(AgentError.of(
                        AgentErrorType.OUTPUT_TOO_LARGE,
                        "agent command " + cmd + " printed more than " + Texts.bytes(MAX_STDOUT_BYTES)
                                + " on stdout and" + " was killed; an output may be at most "
                                + Texts.bytes(MAX_OUTPUT_BYTES)));
            case EXITED ->
                r.exitCode() != 0
                        ? Attempts.Result.failed(AgentError.of(
                                AgentErrorType.NONZERO_EXIT,
                                "agent command " + cmd + " exited with status " + r.exitCode() + " after "
                                        + Texts.seconds(r.elapsed()) + "; fix the agent (it must exit 0)" + stderr(r)))
                        : output(r.stdout(), cmd);
        };
    }

    /**
     * A {@code tool_call} event as a tool call ({@code id} and {@code name} strings, {@code arguments} a string or
     * any JSON value, taken as its compact text), as transcripts read it; empty for any other event.
     */
    static Optional<AgentToolCall> toolCall(JsonNode e) {
        if (!"tool_call".equals(e.path("type").asText())
                || !e.path("id").isTextual()
                || !e.path("name").isTextual()
                || !e.has("arguments")) {
            return Optional.empty();
        }
        JsonNode args = e.get("arguments");
        return Optional.of(new AgentToolCall(
                e.get("id").asText(), e.get("name").asText(), args.isTextual() ? args.asText() : Json.text(args)));
    }

    /** Applies the stdout rules of the protocol. */
    private static Attempts.Result output(byte[] stdout, String cmd) {
        String text;
        try {
            text = StandardCharsets.UTF_8
                    .newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(stdout))
                    .toString();
        } catch (CharacterCodingException e) {
            return Attempts.Result.failed(AgentError.of(
                    AgentErrorType.INVALID_OUTPUT,
                    "agent command " + cmd + " printed stdout that is not valid UTF-8; print UTF-8 text or one JSON"
                            + " object {\"output\": \"...\"}"));
        }
        String output = text;
        String trimmed = text.strip();
        if (trimmed.startsWith("{") && trimmed.endsWith("}")) {
            Optional<JsonNode> object = object(trimmed);
            if (object.isPresent() && object.get().has("output")) {
                JsonNode o = object.get().get("output");
                if (!o.isTextual()) {
                    return Attempts.Result.failed(AgentError.of(
                            AgentErrorType.INVALID_OUTPUT,
                            "agent command " + cmd + " printed a JSON object whose \"output\" is "
                                    + o.getNodeType().toString().toLowerCase(Locale.ROOT)
                                    + ", not a string; print {\"output\": \"<text>\"}"));
                }
                output = o.asText();
            } else {
                output = withoutFinalNewline(text);
            }
        } else {
            output = withoutFinalNewline(text);
        }
        int size = utf8Length(output);
        if (size > MAX_OUTPUT_BYTES) {
            return Attempts.Result.failed(AgentError.of(
                    AgentErrorType.OUTPUT_TOO_LARGE,
                    "agent command " + cmd + " answered " + size + " bytes; an output may be at most "
                            + Texts.bytes(MAX_OUTPUT_BYTES)));
        }
        return Attempts.Result.ok(output);
    }

    private static Optional<JsonNode> object(String text) {
        try {
            JsonNode n = Json.parse(text);
            return n.isObject() ? Optional.of(n) : Optional.empty();
        } catch (IOException e) {
            return Optional.empty();
        }
    }

    static String withoutFinalNewline(String s) {
        if (s.endsWith("\r\n")) {
            return s.substring(0, s.length() - 2);
        }
        return s.endsWith("\n") ? s.substring(0, s.length() - 1) : s;
    }

    static int utf8Length(String s) {
        int n = 0;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c < 0x80) {
                n += 1;
            } else if (c < 0x800) {
                n += 2;
            } else if (Character.isHighSurrogate(c)
                    && i + 1 < s.length()
                    && Character.isLowSurrogate(s.charAt(i + 1))) {
                n += 4;
                i++;
            } else {
                n += 3;
            }
        }
        return n;
    }

    private static String stderr(ChildProcess.Result r) {
        String tail = Texts.tail(r.stderrTail(), 300);
        return tail.isEmpty() ? "; stderr was empty" : "; stderr ends: " + tail;
    }

    /** {@code {"case":<the case bytes>}\n}, the case spliced in byte for byte. */
    static byte[] stdin(byte[] caseJson) {
        ByteArrayOutputStream b = new ByteArrayOutputStream(caseJson.length + 10);
        b.writeBytes("{\"case\":".getBytes(StandardCharsets.US_ASCII));
        b.writeBytes(caseJson);
        b.writeBytes("}\n".getBytes(StandardCharsets.US_ASCII));
        return b.toByteArray();
    }

    @Override
    public void close() {
        // Nothing shared: every attempt's process and threads end with the attempt.
    }

    @Override
    public String toString() {
        return "CommandAgent[" + Texts.command(argv) + "]";
    }

    /** The per-attempt events file of the protocol; read bounded, then removed. */
    static final class EventsFile {
        /** At most this many events are delivered per attempt. */
        static final int MAX_EVENTS = 10_000;
        /** At most this many bytes of the file are read per attempt. */
        static final int MAX_BYTES = 8 << 20;

        private final Path path;

        private EventsFile(Path path) {
            this.path = path;
        }

        static EventsFile create(Path dir) throws IOException {
            return new EventsFile(Files.createTempFile(dir, "vigilo-events-", ".jsonl"));
        }

        Path path() {
            return path;
        }

        /**
         * Passes each line that is one JSON object to {@code sink}, in order; other lines, and anything past
         * {@link #MAX_EVENTS} or {@link #MAX_BYTES}, are skipped. An unreadable file delivers nothing.
         */
        void deliver(Consumer<JsonNode> sink) {
            byte[] bytes;
            try (var in = Files.newInputStream(path)) {
                bytes = in.readNBytes(MAX_BYTES);
            } catch (IOException e) {
                return;
            }
            int delivered = 0;
            int from = 0;
            while (from < bytes.length && delivered < MAX_EVENTS) {
                int nl = from;
                while (nl < bytes.length && bytes[nl] != '\n') {
                    nl++;
                }
                if (nl == bytes.length && bytes.length == MAX_BYTES) {
                    break; // a line cut by the read limit is not an event
                }
                if (nl > from) {
                    try {
                        JsonNode n = Json.MAPPER.readTree(bytes, from, nl - from);
                        if (n != null && n.isObject()) {
                            sink.accept(n);
                            delivered++;
                        }
                    } catch (IOException e) {
                        // Not one JSON object: skipped, as the protocol says.
                    }
                }
                from = nl + 1;
            }
        }

        void delete() {
            try {
                Files.deleteIfExists(path);
            } catch (IOException e) {
                // A leftover empty-ish file in the scratch directory harms nothing.
            }
        }
    }
}
