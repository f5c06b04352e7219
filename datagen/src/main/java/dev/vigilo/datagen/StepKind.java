package dev.vigilo.datagen;

/** The kinds of pipeline step (the YAML {@code kind} key, lower case). */
public enum StepKind {
    /** Runs a program: item JSON on stdin, a JSON object of field updates on stdout. */
    COMMAND,
    /** Calls an OpenAI-compatible chat completions endpoint. */
    HTTP,
    /**
     * Calls an OpenAI-compatible chat completions endpoint with templated messages, model parameters, structured
     * output, rate limits, usage and cost accounting and an optional response cache.
     */
    CHAT,
    /** Renders a {@code {{field}}} template into a field. */
    TEMPLATE,
    /** Keeps the item if a condition holds, else ends it as filtered. */
    FILTER,
    /** Creates one child item per element of a list field; the parent completes. */
    EXPAND,
    /** Runs a body step repeatedly until a condition holds or max_iterations is reached. */
    LOOP,
    /**
     * Ends an item as filtered when its field duplicates that of an item earlier in item order (exactly, or by
     * MinHash similarity); the decision waits until every earlier item passed the step's input or ended.
     */
    DEDUP
}
