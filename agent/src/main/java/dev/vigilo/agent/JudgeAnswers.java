package dev.vigilo.agent;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectReader;
import java.io.IOException;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads a score and a reason from a judge's answer text (docs/formats/agent-protocol.md, "Judges"), in this order:
 * the whole text (a Markdown code fence around it removed) as a JSON object with {@code score}; else the first JSON
 * object with a {@code score} found anywhere in the text (an endpoint that ignores {@code response_format} often
 * wraps it in prose); else the last line {@code score: N} (or {@code grade: X}, {@code =} for {@code :}, Markdown
 * emphasis around allowed) with a line {@code reason: ...} as its reason, or else the text without its score lines. Stateless.
 */
final class JudgeAnswers {
    /** The most of an answer's text searched for an embedded object or a score line. */
    static final int MAX_SCANNED = 64 << 10;
    /** The most opening braces tried as the start of an embedded object (bounds the work on a hostile answer). */
    static final int MAX_OBJECT_STARTS = 64;

    private static final Pattern FENCE = Pattern.compile("\\A```[A-Za-z]*\\s*\\n(.*)\\n\\s*```\\z", Pattern.DOTALL);
    private static final Pattern SCORE_LINE = Pattern.compile(
            "^[ \\t>*#_-]*(?:score|grade)[ \\t*_]*[:=][ \\t*_]*([^\\s*_,;]+)",
            Pattern.MULTILINE | Pattern.CASE_INSENSITIVE);
    private static final Pattern SCORE_LINE_WHOLE = Pattern.compile(
            "^[ \\t>*#_-]*(?:score|grade)[ \\t*_]*[:=].*$\\n?", Pattern.MULTILINE | Pattern.CASE_INSENSITIVE);
    private static final Pattern REASON_LINE = Pattern.compile(
            "^[ \\t>*#_-]*reason[ \\t*_]*[:=][ \\t*_]*(.+)$", Pattern.MULTILINE | Pattern.CASE_INSENSITIVE);

    /** The module's strict reader, except that what follows the object (prose) is not an error. */
    private static final ObjectReader EMBEDDED =
            Json.MAPPER.reader().without(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);

    private JudgeAnswers() {}

    /**
     * What an answer said.
     *
     * @param scored the score, or why there is none
     * @param reason the judge's reason, when it gave one
     */
    record Read(JudgeScale.Scored scored, Optional<String> reason) {}

    static Read read(String answer, JudgeScale scale) {
        String text = answer.strip();
        Matcher fence = FENCE.matcher(text);
        if (fence.matches()) {
            text = fence.group(1).strip();
        }
        try {
            JsonNode whole = Json.parse(text);
            if (whole.isObject() && whole.has("score")) {
                return fromObject(whole, scale);
            }
        } catch (IOException e) {
            // Not one JSON value: look inside.
        }
        String scanned = text.length() > MAX_SCANNED ? text.substring(0, MAX_SCANNED) : text;
        Optional<JsonNode> embedded = embeddedObject(scanned);
        if (embedded.isPresent()) {
            return fromObject(embedded.get(), scale);
        }
        Matcher line = SCORE_LINE.matcher(scanned);
        String last = null;
        while (line.find()) {
            last = line.group(1);
        }
        if (last != null) {
            String given = last;
            Matcher r = REASON_LINE.matcher(scanned);
            Optional<String> reason = r.find()
                    ? Optional.of(r.group(1).strip())
                    : nonEmpty(SCORE_LINE_WHOLE.matcher(text).replaceAll("").strip());
            JudgeScale.Scored s = scale.isGrades()
                    ? scale.grade(given)
                    : JudgeScale.number(given)
                            .map(n -> scale.number(n, given))
                            .orElseGet(() -> new JudgeScale.Refused(
                                    "the score " + Texts.oneLine(given, 40) + " is not a number"));
            return new Read(s, reason);
        }
        return new Read(
                new JudgeScale.Refused(
                        text.isEmpty()
                                ? "the answer is empty"
                                : "the answer has no JSON object with a \"score\" and no line \"score: N\""),
                Optional.empty());
    }

    private static Read fromObject(JsonNode o, JudgeScale scale) {
        JsonNode r = o.get("reason");
        Optional<String> reason =
                r == null || r.isNull() ? Optional.empty() : nonEmpty(r.isTextual() ? r.asText() : Json.text(r));
        return new Read(scale.score(o.get("score")), reason);
    }

    /** The first JSON object with a {@code score} that starts at one of the first opening braces of {@code text}. */
    private static Optional<JsonNode> embeddedObject(String text) {
        char[] chars = text.toCharArray();
        int tried = 0;
        for (int i = text.indexOf('{'); i >= 0 && tried < MAX_OBJECT_STARTS; i = text.indexOf('{', i + 1), tried++) {
            try (JsonParser p = Json.MAPPER.getFactory().createParser(chars, i, chars.length - i)) {
                // One value from here; what follows it is prose, not an error.
                JsonNode n = EMBEDDED.readTree(p);
                if (n != null && n.isObject() && n.has("score")) {
                    return Optional.of(n);
                }
            } catch (IOException e) {
                // Not an object starting here.
            }
        }
        return Optional.empty();
    }

    private static Optional<String> nonEmpty(String s) {
        return s == null || s.isBlank() ? Optional.empty() : Optional.of(s.strip());
    }
}
