package dev.vigilo.llm;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * One choice of an answer ({@code choices[i]}), parsed without judging it: each caller decides which shapes it
 * accepts.
 *
 * @param index        {@code index}, or the choice's position when it has none
 * @param message      the raw {@code message} (a missing node when there is none), for what a caller keeps as sent
 * @param contentKind  the shape of {@code message.content}
 * @param text         the text: the string content, or the content parts' texts joined (a part without text adds
 *                     nothing); empty for {@link ContentKind#ABSENT} and {@link ContentKind#OTHER}
 * @param parts        the content parts ({@link ContentKind#PARTS} only)
 * @param toolCalls    the elements of {@code message.tool_calls}, when it is an array
 * @param finishReason {@code finish_reason}
 * @param reasoning    {@code message.reasoning_content} when the message has that member, else {@code
 *                     message.reasoning}; only when it is a string
 */
public record ChatChoice(
        int index,
        JsonNode message,
        ContentKind contentKind,
        Optional<String> text,
        List<ContentPart> parts,
        List<ToolCall> toolCalls,
        Optional<String> finishReason,
        Optional<String> reasoning) {
    /** The shape of a message's content. */
    public enum ContentKind {
        /** A string. */
        TEXT,
        /** An array of content parts. */
        PARTS,
        /** Missing or {@code null}. */
        ABSENT,
        /** Any other JSON value. */
        OTHER
    }

    /**
     * One content part.
     *
     * @param type its {@code type}, if a string
     * @param text its {@code text}, if a string
     */
    public record ContentPart(Optional<String> type, Optional<String> text) {}

    public ChatChoice {
        Objects.requireNonNull(message, "message");
        Objects.requireNonNull(contentKind, "contentKind");
        Objects.requireNonNull(text, "text");
        parts = List.copyOf(parts);
        toolCalls = List.copyOf(toolCalls);
        Objects.requireNonNull(finishReason, "finishReason");
        Objects.requireNonNull(reasoning, "reasoning");
    }

    static ChatChoice parse(JsonNode choice, int position) {
        JsonNode msg = choice.path("message");
        JsonNode content = msg.path("content");
        ContentKind kind;
        Optional<String> text = Optional.empty();
        List<ContentPart> parts = new ArrayList<>();
        if (content.isTextual()) {
            kind = ContentKind.TEXT;
            text = Optional.of(content.textValue());
        } else if (content.isArray()) {
            kind = ContentKind.PARTS;
            StringBuilder joined = new StringBuilder();
            for (JsonNode part : content) {
                Optional<String> t = textual(part.path("text"));
                parts.add(new ContentPart(textual(part.path("type")), t));
                t.ifPresent(joined::append);
            }
            text = Optional.of(joined.toString());
        } else if (content.isMissingNode() || content.isNull()) {
            kind = ContentKind.ABSENT;
        } else {
            kind = ContentKind.OTHER;
        }
        List<ToolCall> calls = new ArrayList<>();
        JsonNode tc = msg.path("tool_calls");
        if (tc.isArray()) {
            tc.forEach(c -> calls.add(ToolCall.parse(c)));
        }
        JsonNode reasoning = msg.has("reasoning_content") ? msg.get("reasoning_content") : msg.get("reasoning");
        return new ChatChoice(
                choice.path("index").asInt(position),
                msg,
                kind,
                text,
                parts,
                calls,
                textual(choice.path("finish_reason")),
                reasoning == null ? Optional.empty() : textual(reasoning));
    }

    private static Optional<String> textual(JsonNode n) {
        return n.isTextual() ? Optional.of(n.textValue()) : Optional.empty();
    }
}
