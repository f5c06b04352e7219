package dev.vigilo.config;

import dev.vigilo.common.errors.InvalidInputException;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A judge's {@code rubric} (docs/formats/plan-profile.md, {@code kind: judge}): text with placeholders {@code
 * {{input}}}, {@code {{output}}}, {@code {{expected}}}, {@code {{case.id}}} and {@code {{metadata.KEY}}}. One rule for
 * the profile reader that validates a rubric and the worker that renders it, as {@link SafeRegex} is for patterns.
 *
 * <p>A placeholder is {@code {{}}, optional blanks, a name, optional blanks, {@code }}} on one line; every such
 * span must name a known placeholder (a typo must not reach the judge as literal text). Braces that do not form one
 * ({@code {"a": {"b": 1}}}, a lone {@code {{}) are literal text. Immutable.
 */
public final class RubricTemplate {
    /** The placeholders, as an error message lists them. */
    public static final String KNOWN = "{{input}}, {{output}}, {{expected}}, {{case.id}}, {{metadata.KEY}}";

    private static final Pattern SPAN = Pattern.compile("\\{\\{[ \\t]*([^{}\\n]*?)[ \\t]*\\}\\}");
    private static final Pattern NAME = Pattern.compile("input|output|expected|case\\.id|metadata\\.[A-Za-z0-9_.:-]+");

    /**
     * One piece of a rubric.
     *
     * @param placeholder whether this is a placeholder (else literal text)
     * @param text        the literal text, or the placeholder's name ({@code input}, {@code metadata.lang}, ...)
     */
    public record Part(boolean placeholder, String text) {
        public Part {
            Objects.requireNonNull(text, "text");
        }
    }

    private final List<Part> parts;

    private RubricTemplate(List<Part> parts) {
        this.parts = List.copyOf(parts);
    }

    /**
     * Parses {@code rubric}.
     *
     * @throws InvalidInputException for the first unknown placeholder: {@code unknown placeholder {{foo}}; known:
     *     ...}, without a location (the caller adds where the rubric came from)
     */
    public static RubricTemplate parse(String rubric) {
        List<Part> parts = new ArrayList<>();
        Matcher m = SPAN.matcher(rubric);
        int at = 0;
        while (m.find()) {
            String name = m.group(1);
            if (!NAME.matcher(name).matches()) {
                throw new InvalidInputException("unknown placeholder {{" + shown(name) + "}}; known: " + KNOWN);
            }
            if (m.start() > at) {
                parts.add(new Part(false, rubric.substring(at, m.start())));
            }
            parts.add(new Part(true, name));
            at = m.end();
        }
        if (at < rubric.length()) {
            parts.add(new Part(false, rubric.substring(at)));
        }
        return new RubricTemplate(parts);
    }

    /** The parts, in order. */
    public List<Part> parts() {
        return parts;
    }

    /** Whether the rubric has placeholder {@code name}. */
    public boolean uses(String name) {
        return parts.stream().anyMatch(p -> p.placeholder() && p.text().equals(name));
    }

    /** The rubric with each placeholder replaced by {@code values}' text for its name (never null). */
    public String render(Function<String, String> values) {
        StringBuilder b = new StringBuilder();
        for (Part p : parts) {
            b.append(p.placeholder() ? Objects.requireNonNull(values.apply(p.text()), p.text()) : p.text());
        }
        return b.toString();
    }

    private static String shown(String name) {
        return name.length() > 40 ? name.substring(0, 40) + "..." : name;
    }
}
