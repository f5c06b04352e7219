package dev.vigilo.datagen;

import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * One step of a pipeline, as parsed. Fields not used by a kind are null.
 *
 * @param name unique step name
 * @param kind the step kind
 * @param command argv of a command step
 * @param url endpoint of an http step ({@code .../v1/chat/completions})
 * @param model model name of an http step
 * @param template template of a template step, or prompt of an http step ({@code {{field}}}
 *     placeholders)
 * @param outputField field written by template/http steps
 * @param condition filter's keep condition, loop's until condition
 * @param listField expand's list field
 * @param childField expand: field of the child holding its element
 * @param body loop body
 * @param maxIterations loop bound
 * @param retries extra attempts after a failure (0 = one attempt)
 * @param timeout per-attempt timeout
 * @param concurrency at most this many concurrent executions of this step (0 = unlimited)
 * @param chat what a chat step sends and keeps (null for other kinds)
 * @param dedup what a dedup step compares (null for other kinds)
 */
public record StepSpec(
        String name,
        StepKind kind,
        List<String> command,
        String url,
        String model,
        String template,
        String outputField,
        Condition condition,
        String listField,
        String childField,
        StepSpec body,
        int maxIterations,
        int retries,
        Duration timeout,
        int concurrency,
        ChatSpec chat,
        DedupSpec dedup) {
    public StepSpec {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(timeout, "timeout");
        command = command == null ? null : List.copyOf(command);
    }

    /** Attempts allowed in total. */
    public int maxAttempts() {
        return retries + 1;
    }
}
