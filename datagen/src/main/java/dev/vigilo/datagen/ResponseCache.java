package dev.vigilo.datagen;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;

/**
 * Answers of chat steps with {@code cache: true}, by canonical request hash: loaded when a run starts from the
 * experiment's checkpoint log (and the logs of {@code --cache-from} experiments), where each such step's
 * STEP_COMPLETED keeps its request hash and its answer in its query tags, then grown by the run's own answers.
 * Identical requests in flight at once are sent once: the others wait for the first one's answer ({@link #claim}).
 * Thread-safe.
 */
final class ResponseCache {
    private final Map<String, ObjectNode> answers = new ConcurrentHashMap<>();
    private final Map<String, CompletableFuture<Optional<ObjectNode>>> inFlight = new ConcurrentHashMap<>();

    /** Adds an answer found in a checkpoint log. */
    void preload(String hash, ObjectNode answer) {
        answers.putIfAbsent(hash, answer);
    }

    /** Cached answers. */
    int size() {
        return answers.size();
    }

    /**
     * The cached answer of {@code hash}, waiting for an identical request in flight; empty when the caller must send
     * the request itself, after which it must call {@link #complete} (in a finally block).
     */
    Optional<ObjectNode> claim(String hash) throws InterruptedException {
        while (true) {
            ObjectNode a = answers.get(hash);
            if (a != null) {
                return Optional.of(a);
            }
            CompletableFuture<Optional<ObjectNode>> mine = new CompletableFuture<>();
            CompletableFuture<Optional<ObjectNode>> other = inFlight.putIfAbsent(hash, mine);
            if (other == null) {
                // Answered between the lookup and the claim?
                a = answers.get(hash);
                if (a == null) {
                    return Optional.empty();
                }
                complete(hash, a);
                return Optional.of(a);
            }
            try {
                Optional<ObjectNode> got = other.get();
                if (got.isPresent()) {
                    return got;
                }
                // The other request failed: try to become the sender.
            } catch (ExecutionException e) {
                // complete() never fails the future exceptionally; treat like a failed request.
            }
        }
    }

    /** The request {@code hash} claimed by the caller ended with {@code answer} (null: it failed). */
    void complete(String hash, ObjectNode answer) {
        if (answer != null) {
            answers.put(hash, answer);
        }
        CompletableFuture<Optional<ObjectNode>> f = inFlight.remove(hash);
        if (f != null) {
            f.complete(Optional.ofNullable(answer));
        }
    }

    /** An answer as stored: a JSON object (anything else is not a cache entry). */
    static Optional<ObjectNode> asAnswer(JsonNode n) {
        return n instanceof ObjectNode o ? Optional.of(o) : Optional.empty();
    }
}
