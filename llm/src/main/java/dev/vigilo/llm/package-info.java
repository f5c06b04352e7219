/**
 * The one client of OpenAI-compatible chat completions endpoints, shared by the {@code http} agent and datagen's
 * chat steps: {@link dev.vigilo.llm.ChatRequest} builds a request body, {@link dev.vigilo.llm.ChatCompletions}
 * sends one exchange and classifies how it ended ({@link dev.vigilo.llm.ChatExchange.Outcome}), {@link
 * dev.vigilo.llm.ChatAnswer} parses an answer (text, content parts, tool calls, finish reason, usage), and a {@link
 * dev.vigilo.llm.ChatLimiter} decides when a call may be sent (several compose with {@link
 * dev.vigilo.llm.ChatLimiter#all}). Retries, messages and attempt semantics stay with
 * the callers: this package never retries and never writes a message a user reads.
 */
package dev.vigilo.llm;
