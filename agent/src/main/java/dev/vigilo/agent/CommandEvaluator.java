package dev.vigilo.agent;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import dev.vigilo.agent.sandbox.SandboxAttempt;
import dev.vigilo.config.ConfigReader;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * {@code command}: a program reads {@code {"case": <case record>, "output": "<output>"}} on stdin and prints a score
 * in [0, 1] (docs/formats/agent-protocol.md); the output passes when the score is at least {@code pass_score}. A
 * string {@code reason} beside the score in an object is the result's reason.
 */
final class CommandEvaluator implements Evaluator {
    /** Protocol version, given to the command as {@code VIGILO_EVALUATOR_PROTOCOL}. */
    static final int PROTOCOL_VERSION = 1;
    /** The most stdout read: a score, possibly in a small JSON object. */
    static final int MAX_STDOUT_BYTES = 64 << 10;

    private final String name;
    private final List<String> argv;
    private final Duration timeout;
    private final double passScore;
    private final Map<String, String> profileEnv;
    private final AgentEnvironment env;

    CommandEvaluator(
            String name,
            List<String> argv,
            Duration timeout,
            double passScore,
            Map<String, String> profileEnv,
            AgentEnvironment env) {
        this.name = name;
        this.argv = List.copyOf(argv);
        this.timeout = timeout;
        this.passScore = passScore;
        this.profileEnv = Map.copyOf(profileEnv);
        this.env = env;
    }

    @Override
    public Verdict evaluate(CaseRecord caseRecord, JsonNode caseTree, String output) {
        return evaluate(caseRecord, caseTree, output, EvaluationContext.NONE);
    }

    /** Runs the command in the context's sandbox when there is one, on the host otherwise. */
    @Override
    public Verdict evaluate(CaseRecord caseRecord, JsonNode caseTree, String output, EvaluationContext context) {
        Map<String, String> childEnv = new HashMap<>(env.variables());
        childEnv.putAll(profileEnv);
        childEnv.put("VIGILO_EVALUATOR_PROTOCOL", Integer.toString(PROTOCOL_VERSION));
        Optional<SandboxAttempt> sandbox = context.sandbox();
        List<String> command = sandbox.map(s -> s.wrap(argv, childEnv.keySet())).orElse(argv);
        Path directory = sandbox.map(SandboxAttempt::launchDirectory).orElse(env.workingDirectory());
        ChildProcess.Result r = ChildProcess.run(new ChildProcess.Spec(
                command,
                childEnv,
                directory,
                stdin(caseRecord.json(), output),
                timeout,
                MAX_STDOUT_BYTES,
                env.secrets()));
        String who = "evaluator \"" + name + "\" (command " + Texts.command(argv) + ")";
        return switch (r.ending()) {
            case NOT_STARTED ->
                Verdict.error(
                        EvaluatorErrorType.EVALUATOR_NOT_FOUND,
                        who + " cannot be started: " + r.startProblem() + "; check its command[0] (looked up on the"
                                + " worker's PATH; a relative path is relative to " + env.workingDirectory() + ")");
            case CANCELLED ->
                Verdict.error(
                        EvaluatorErrorType.CANCELLED, who + " was cancelled (the worker was interrupted) and killed");
            case TIMED_OUT ->
                Verdict.error(
                        EvaluatorErrorType.TIMEOUT,
                        who + " did not finish within " + timeout.toSeconds() + " s and was killed; raise its"
                                + " timeout_seconds or make it faster" + stderr(r));
            case STDOUT_OVERFLOW ->
                Verdict.error(
                        EvaluatorErrorType.INVALID_SCORE,
                        who + " printed more than " + Texts.bytes(MAX_STDOUT_BYTES) + "; it must print one score in"
                                + " [0, 1]");
            case EXITED ->
                r.exitCode() != 0
                        ? Verdict.error(
                                EvaluatorErrorType.EVALUATOR_CRASHED,
                                who + " exited with status " + r.exitCode() + "; fix the evaluator (it must exit 0)"
                                        + stderr(r))
                        : score(r.stdout(), who);
        };
    }

    private Verdict score(byte[] stdout, String who) {
        String text;
        try {
            text = StandardCharsets.UTF_8
                    .newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(stdout))
                    .toString()
                    .strip();
        } catch (CharacterCodingException e) {
            return invalid(who, "stdout that is not UTF-8");
        }
        // What is quoted is masked before quoting cuts it: a cut could leave a part of a value no mask matches.
        String shown = env.secrets().mask(text);
        if (text.isEmpty()) {
            return invalid(who, "nothing");
        }
        JsonNode value;
        try {
            value = Json.parse(text);
        } catch (IOException e) {
            return invalid(who, "\"" + Texts.oneLine(shown, 60) + "\"");
        }
        JsonNode number = value.isObject() ? value.get("score") : value;
        if (number == null || !number.isNumber()) {
            return invalid(who, "\"" + Texts.oneLine(shown, 60) + "\"");
        }
        double score = number.asDouble();
        if (!(score >= 0 && score <= 1)) {
            return invalid(
                    who, "the score " + Texts.oneLine(env.secrets().mask(number.asText()), 40) + ", outside [0, 1]");
        }
        Optional<String> reason = Optional.empty();
        JsonNode given = value.isObject() ? value.get("reason") : null;
        if (given != null && !given.isNull()) {
            if (!given.isTextual()) {
                return Verdict.error(
                        EvaluatorErrorType.INVALID_SCORE,
                        who + " printed a reason that is " + ConfigReader.typeOf(given) + "; \"reason\" must be a"
                                + " string (or left out)");
            }
            reason = given.asText().isEmpty() ? Optional.empty() : Optional.of(given.asText());
        }
        return new Verdict(score >= passScore, score, Optional.empty(), reason);
    }

    private static Verdict invalid(String who, String what) {
        return Verdict.error(
                EvaluatorErrorType.INVALID_SCORE,
                who + " printed " + what + "; it must print one number in [0, 1] (or {\"score\": n})");
    }

    private static String stderr(ChildProcess.Result r) {
        String tail = Texts.tail(r.stderrTail(), 300);
        return tail.isEmpty() ? "; stderr was empty" : "; stderr ends: " + tail;
    }

    /** {@code {"case":<the case bytes>,"output":"<output>"}\n}. */
    static byte[] stdin(byte[] caseJson, String output) {
        ByteArrayOutputStream b = new ByteArrayOutputStream(caseJson.length + output.length() + 32);
        b.writeBytes("{\"case\":".getBytes(StandardCharsets.US_ASCII));
        b.writeBytes(caseJson);
        b.writeBytes(",\"output\":".getBytes(StandardCharsets.US_ASCII));
        b.writeBytes(Json.bytes(JsonNodeFactory.instance.textNode(output)));
        b.writeBytes("}\n".getBytes(StandardCharsets.US_ASCII));
        return b.toByteArray();
    }
}
