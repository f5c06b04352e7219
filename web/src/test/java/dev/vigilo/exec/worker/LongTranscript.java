package dev.vigilo.exec.worker;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.vigilo.exec.record.TranscriptStore;
import dev.vigilo.sessionlog.Epoch;
import dev.vigilo.sessionlog.SessionHeader;
import dev.vigilo.sessionlog.SessionLogEncoder;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * A long tool-calling transcript for the dashboard's tests, written as a worker writes one: the events built by exec's
 * {@link AttemptTranscript} (what the worker's recorder records of an http agent with tools: each model call a step,
 * its tool call, the tool's result), encoded by the session-log writer's encoder with the worker's options and batch
 * size. Step {@code k} calls {@code lookup} with {@code {"k": k}} and gets {@code "value k"}; every
 * {@value #NEEDLE_EVERY}th result also holds {@link #NEEDLE}. Then the answer, the output, one evaluator and the gates.
 */
public final class LongTranscript {
    /** A word in a few tool results, to search for. */
    public static final String NEEDLE = "Zanzibar";

    public static final int NEEDLE_EVERY = 2_000;
    /** The answer's text (the output). */
    public static final String ANSWER = "The lookups are done: 42.";

    /** Events per batch, as the worker's transcript store writes them (one zstd frame each). */
    private static final int BATCH_EVENTS = 256;

    private static final JsonNodeFactory F = JsonNodeFactory.instance;

    private LongTranscript() {}

    /**
     * Writes a transcript of at least {@code events} events to {@code file}.
     *
     * @return the number of events written
     */
    public static int write(Path file, int events) throws IOException {
        ObjectNode c = F.objectNode()
                .put("v", AttemptTranscript.VERSION)
                .put("run_id", UUID.randomUUID().toString())
                .put("chunk_index", 0)
                .put("case_id", "long-case")
                .put("ordinal", 0)
                .put("case_sha256", "0".repeat(64))
                .put("attempt", 1)
                .put("lease_generation", 1);
        AttemptTranscript t =
                new AttemptTranscript(1, c, "Look up every value.", AttemptTranscript.HTTP_PROVIDER, "long-model");
        for (int k = 1; t.events().size() < events - 8; k++) {
            t.request(request());
            ObjectNode answer = F.objectNode();
            ObjectNode message = answer.putArray("choices").addObject().putObject("message");
            message.put("role", "assistant");
            ObjectNode call = message.putArray("tool_calls")
                    .addObject()
                    .put("id", "call-" + k)
                    .put("type", "function");
            call.putObject("function").put("name", "lookup").put("arguments", "{\"k\":" + k + "}");
            answer.putObject("usage").put("prompt_tokens", 100 + k).put("completion_tokens", 7);
            t.response(200, answer);
            t.toolResult("call-" + k, "value " + k + (k % NEEDLE_EVERY == 0 ? " found in " + NEEDLE : ""), false);
        }
        t.request(request());
        ObjectNode answer = F.objectNode();
        answer.putArray("choices")
                .addObject()
                .putObject("message")
                .put("role", "assistant")
                .put("content", ANSWER);
        t.response(200, answer);
        t.output(ANSWER, ANSWER.length(), "0".repeat(64));
        t.evaluator("right", true, 1.0, "the output contains 42", null, null, 3);
        t.gates(false, Map.of("all", "passed"));
        List<ObjectNode> all = t.events();
        SessionLogEncoder log = new SessionLogEncoder(
                new SessionHeader("long-transcript", null, System.currentTimeMillis(), 0),
                new Epoch(1),
                TranscriptStore.OPTIONS);
        for (int from = 0; from < all.size(); from += BATCH_EVENTS) {
            log.append(all.subList(from, Math.min(all.size(), from + BATCH_EVENTS)));
        }
        Files.createDirectories(file.getParent());
        Files.write(file, log.toByteArray());
        return all.size();
    }

    private static ObjectNode request() {
        ObjectNode body = F.objectNode().put("model", "long-model");
        body.putArray("messages").addObject().put("role", "user").put("content", "Look up every value.");
        return body;
    }
}
