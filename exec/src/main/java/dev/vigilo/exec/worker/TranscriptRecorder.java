package dev.vigilo.exec.worker;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.vigilo.agent.AgentAttempt;
import dev.vigilo.agent.AgentErrorType;
import dev.vigilo.agent.AgentObserver;
import dev.vigilo.agent.EvaluatorObserver;
import dev.vigilo.common.json.StrictJson;
import dev.vigilo.dataset.StoredCase;
import dev.vigilo.exec.record.Receipt;
import dev.vigilo.exec.record.TranscriptStore;
import dev.vigilo.sessionlog.SessionHeader;
import dev.vigilo.sessionlog.SessionLogEncoder;
import dev.vigilo.storage.ObjectRef;
import dev.vigilo.storage.Sha256;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * Records one case's agent call as transcripts, one per attempt (docs/transcripts.md): watches the call as its
 * {@link AgentObserver}, builds each attempt's events ({@link AttemptTranscript}), writes a finished attempt (to the
 * chunk's {@link TranscriptContainers}, or as its own object) when the
 * next one starts, and the last one, with the output, the judges' model calls (watched as the evaluators' {@link
 * EvaluatorObserver}, kept until then), the evaluators' results and the gate outcomes, in {@link #finish}. A cancelled
 * attempt is not written.
 *
 * <p>Observer callbacks never throw: a failure is kept and thrown by {@link #finish}, on the case's thread, where it
 * takes the chunk's retry path. Used by the one thread running the case.
 */
final class TranscriptRecorder implements AgentObserver, EvaluatorObserver {
    private static final ObjectMapper MAPPER = StrictJson.newMapper();

    /**
     * What names a case's transcripts and what the agent is.
     *
     * @param provider     {@link AttemptTranscript#HTTP_PROVIDER} or {@link AttemptTranscript#COMMAND_PROVIDER}
     * @param defaultModel the configured model, or a command's program name
     * @param containers   the chunk's transcript containers, which every attempt's transcript is appended to (receipt
     *                     version 8); empty: each transcript is its own object (versions 2-7; {@code
     *                     vigilo.worker.transcriptObjects}, kept for measurements)
     */
    record Scope(
            RunContext run,
            long chunkIndex,
            long generation,
            String provider,
            String defaultModel,
            Optional<TranscriptContainers> containers) {}

    private final Scope scope;
    private final StoredCase storedCase;
    private final int epoch;
    private final TranscriptStore store;
    private final String userText;
    private final List<Receipt.TranscriptRef> written = new ArrayList<>();
    private AttemptTranscript current;
    /** the current attempt's transcript, encoded as its events are recorded */
    private SessionLogEncoder currentLog;

    private RuntimeException failure;
    /** The judges' model calls, as event data, in order: recorded in the last attempt's transcript by finish. */
    private final List<String> judgeTypes = new ArrayList<>();

    private final List<ObjectNode> judgeEvents = new ArrayList<>();

    /**
     * @param epoch the 1-based epoch of this execution in a run of several epochs, 0 in a run of one (its keys and
     *              transcripts name no epoch, as before epochs existed)
     */
    TranscriptRecorder(Scope scope, StoredCase storedCase, int epoch, TranscriptStore store) {
        this.scope = Objects.requireNonNull(scope, "scope");
        this.storedCase = Objects.requireNonNull(storedCase, "storedCase");
        this.epoch = epoch;
        this.store = Objects.requireNonNull(store, "store");
        this.userText = userText(storedCase.caseJson());
    }

    /** The case's input as both agent kinds present it: the text itself when it is a JSON string, else compact JSON. */
    static String userText(byte[] caseJson) {
        try {
            JsonNode input = MAPPER.readTree(caseJson).get("input");
            if (input == null) {
                return "";
            }
            return input.isTextual() ? input.asText() : input.toString();
        } catch (IOException e) {
            return "";
        }
    }

    @Override
    public void onAttemptStart(int attempt) {
        guard(() -> {
            writeCurrent(); // a previous attempt failed and is retried: its transcript is complete
            ObjectNode c = JsonNodeFactory.instance
                    .objectNode()
                    .put("v", epoch > 0 ? AttemptTranscript.EPOCH_VERSION : AttemptTranscript.VERSION)
                    .put("run_id", scope.run().runId().toString())
                    .put("chunk_index", scope.chunkIndex())
                    .put("case_id", storedCase.id())
                    .put("ordinal", storedCase.ordinal())
                    .put("case_sha256", storedCase.sha256().toHex());
            if (epoch > 0) {
                c.put("epoch", epoch);
            }
            c.put("attempt", attempt).put("lease_generation", scope.generation());
            RunContext run = scope.run();
            SessionHeader header = new SessionHeader(
                    TranscriptStore.sessionId(
                            run.runId(), scope.chunkIndex(), storedCase.ordinal(), epoch, attempt, scope.generation()),
                    null,
                    System.currentTimeMillis(),
                    0);
            SessionLogEncoder log = TranscriptStore.encoder(header, scope.generation());
            currentLog = log;
            current = new AttemptTranscript(attempt, c, userText, scope.provider(), scope.defaultModel(), log::add);
        });
    }

    @Override
    public void onRequest(int attempt, JsonNode request) {
        guard(() -> current.request(request));
    }

    @Override
    public void onResponse(int attempt, int status, JsonNode response) {
        guard(() -> current.response(status, response));
    }

    @Override
    public void onToolResult(int attempt, String callId, String name, String content, boolean isError) {
        guard(() -> current.toolResult(callId, content, isError));
    }

    @Override
    public void onCachedAnswer(int attempt, String key) {
        guard(() -> current.cachedAnswer(key));
    }

    @Override
    public void onEvent(int attempt, JsonNode event) {
        guard(() -> current.agentEvent(event));
    }

    @Override
    public void onAttemptEnd(AgentAttempt attempt) {
        guard(() -> {
            if (attempt.error().map(e -> e.type() == AgentErrorType.CANCELLED).orElse(false)) {
                current = null; // not a result of the case: nothing is recorded
                currentLog = null;
                return;
            }
            current.end(attempt);
        });
    }

    @Override
    public void onModelRequest(int evaluator, String name, int attempt, JsonNode request) {
        guard(() -> {
            ObjectNode d = JsonNodeFactory.instance
                    .objectNode()
                    .put("evaluator", evaluator)
                    .put("name", name)
                    .put("attempt", attempt);
            d.set("request", request);
            judgeTypes.add(AttemptTranscript.JUDGE_REQUEST);
            judgeEvents.add(d);
        });
    }

    @Override
    public void onModelResponse(int evaluator, String name, int attempt, int status, JsonNode response, long millis) {
        guard(() -> {
            ObjectNode d = JsonNodeFactory.instance
                    .objectNode()
                    .put("evaluator", evaluator)
                    .put("name", name)
                    .put("attempt", attempt)
                    .put("status", status)
                    .put("ms", millis);
            d.set("response", response);
            judgeTypes.add(AttemptTranscript.JUDGE_RESPONSE);
            judgeEvents.add(d);
        });
    }

    /**
     * Runs a callback's work unless an earlier one failed, then encodes the events it recorded (no tree is kept past
     * the callback: while the call is in flight its transcript is JSON lines); keeps the first failure for {@link
     * #finish}.
     */
    private void guard(Runnable work) {
        if (failure != null) {
            return;
        }
        try {
            work.run();
            if (current != null) {
                current.flush();
            }
        } catch (RuntimeException e) {
            failure = e;
        }
    }

    /**
     * Ends the case: adds the output, the judges' model calls and the evaluators' results (when the agent answered)
     * and the gate outcomes to the last attempt's transcript, and writes it.
     *
     * @param result     the case's result, without transcripts
     * @param output     the agent's output, or null when it errored
     * @return every attempt's transcript, in attempt order
     * @throws RuntimeException the first failure to record or write a transcript
     */
    List<Receipt.TranscriptRef> finish(Receipt.CaseResult result, String output) {
        return finish(result, output, result.evaluatorResults(), Optional.empty());
    }

    /**
     * As {@link #finish(Receipt.CaseResult, String)} for a case a per-case limit stopped after its evaluators ran:
     * the transcript still shows the output and the evaluators' results ({@code judged}), then where it stopped
     * ({@code stopped}, a {@code vigilo/limit} event), then the case's (errored) gate outcomes.
     */
    List<Receipt.TranscriptRef> finish(
            Receipt.CaseResult result, String output, List<Receipt.EvaluatorResult> judged, Optional<String> stopped) {
        if (failure != null) {
            throw failure;
        }
        if (current != null) {
            if (output != null) {
                byte[] utf8 = output.getBytes(java.nio.charset.StandardCharsets.UTF_8);
                current.output(output, utf8.length, Sha256.of(utf8).toHex());
                for (int i = 0; i < judgeEvents.size(); i++) {
                    current.judge(judgeTypes.get(i), judgeEvents.get(i));
                }
                for (Receipt.EvaluatorResult e : judged) {
                    current.evaluator(
                            e.name(),
                            e.passed(),
                            e.score(),
                            e.reason().orElse(null),
                            e.error().map(Receipt.Error::type).orElse(null),
                            e.error().map(Receipt.Error::message).orElse(null),
                            e.millis());
                }
            }
            stopped.ifPresent(current::limitExceeded);
            Map<String, String> gates = new LinkedHashMap<>();
            result.gates().forEach((g, o) -> gates.put(g, o.wire));
            current.gates(result.errored(), gates);
            writeCurrent();
        }
        return List.copyOf(written);
    }

    private void writeCurrent() {
        if (current == null) {
            return;
        }
        AttemptTranscript t = current;
        SessionLogEncoder log = currentLog;
        current = null;
        currentLog = null;
        t.flush();
        byte[] bytes = log.toByteArray();
        if (scope.containers().isPresent()) {
            written.add(scope.containers().get().add(t.attempt(), bytes));
            return;
        }
        RunContext run = scope.run();
        ObjectRef ref = store.write(
                run.store(),
                TranscriptStore.key(
                        run.runId(), scope.chunkIndex(), storedCase.ordinal(), epoch, t.attempt(), scope.generation()),
                bytes);
        written.add(new Receipt.TranscriptRef(t.attempt(), ref));
    }
}
