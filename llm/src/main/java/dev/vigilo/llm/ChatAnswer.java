package dev.vigilo.llm;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * A chat completion's answer, parsed: its choices and its usage. Parsing never fails: a body without a {@code
 * choices} array has no choices, and each caller decides what an answer must have.
 *
 * @param choices the elements of {@code choices}, in order
 * @param usage   the token counts, when {@code usage} is an object
 */
public record ChatAnswer(List<ChatChoice> choices, Optional<Usage> usage) {
    public ChatAnswer {
        choices = List.copyOf(choices);
        Objects.requireNonNull(usage, "usage");
    }

    /** The answer {@code body} holds (any JSON value). */
    public static ChatAnswer parse(JsonNode body) {
        List<ChatChoice> choices = new ArrayList<>();
        JsonNode cs = body.path("choices");
        if (cs.isArray()) {
            for (JsonNode c : cs) {
                choices.add(ChatChoice.parse(c, choices.size()));
            }
        }
        return new ChatAnswer(choices, Usage.of(body.get("usage")));
    }

    /** The first choice, if any. */
    public Optional<ChatChoice> first() {
        return choices.isEmpty() ? Optional.empty() : Optional.of(choices.get(0));
    }
}
