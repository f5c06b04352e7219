package dev.vigilo.config;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.cfg.JsonNodeFeature;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A text with {@code {{name}}} placeholders: the one template syntax and rendering (datagen's template, http and chat
 * steps; an http agent's {@code messages}). A placeholder is {@code {{name}}}, blanks allowed inside the braces
 * ({@code {{ name }}}), the name made of ASCII letters, digits, {@code _}, {@code .} and {@code -}; braces around
 * anything else are text. Rendering replaces each placeholder with its value's text ({@link #valueText}): a JSON
 * string verbatim, a missing value or null nothing, any other JSON value its compact JSON text with keys sorted at
 * every depth (so key order never changes a rendering). Which names exist is the caller's business (datagen: any
 * item field; an agent: {@link CasePlaceholders}). Immutable.
 */
public final class Template {
    private static final Pattern PLACEHOLDER = Pattern.compile("\\{\\{\\s*([A-Za-z0-9_.-]+)\\s*}}");
    private static final ObjectMapper SORTED =
            new ObjectMapper().configure(JsonNodeFeature.WRITE_PROPERTIES_SORTED, true);

    private final String text;

    private Template(String text) {
        this.text = text;
    }

    /** The template {@code text}. */
    public static Template of(String text) {
        return new Template(Objects.requireNonNull(text, "text"));
    }

    /** The template as written. */
    public String text() {
        return text;
    }

    /** The names of the placeholders, in order of appearance, repeats included. */
    public List<String> placeholders() {
        List<String> names = new ArrayList<>();
        Matcher m = PLACEHOLDER.matcher(text);
        while (m.find()) {
            names.add(m.group(1));
        }
        return names;
    }

    /**
     * The text with each placeholder replaced by the text of {@code values.apply(name)} ({@code null} for a name
     * without a value).
     */
    public String render(Function<String, JsonNode> values) {
        Matcher m = PLACEHOLDER.matcher(text);
        StringBuilder sb = new StringBuilder();
        while (m.find()) {
            m.appendReplacement(sb, Matcher.quoteReplacement(valueText(values.apply(m.group(1)))));
        }
        m.appendTail(sb);
        return sb.toString();
    }

    /**
     * A value as a template renders it: a string verbatim, {@code null} (no value), a missing node or JSON null as
     * nothing, anything else as compact JSON with sorted keys.
     */
    public static String valueText(JsonNode v) {
        if (v == null || v.isNull() || v.isMissingNode()) {
            return "";
        }
        if (v.isTextual()) {
            return v.textValue();
        }
        try {
            return SORTED.writeValueAsString(v);
        } catch (JsonProcessingException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public String toString() {
        return text;
    }
}
