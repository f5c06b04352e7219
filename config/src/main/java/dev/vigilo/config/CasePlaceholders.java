package dev.vigilo.config;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.MissingNode;
import java.util.Objects;
import java.util.Optional;

/**
 * The placeholders a {@link Template} may name to quote a dataset case (an http agent's {@code messages}): one rule
 * for the profile reader that refuses an unknown one and the worker that renders them, as {@link SafeRegex} is for
 * patterns.
 *
 * <ul>
 *   <li>{@code input}: the case's {@code input};
 *   <li>{@code input.FIELD}: the member {@code FIELD} of an object {@code input} (one level; a name with a dot is not
 *       a field);
 *   <li>{@code metadata.KEY}: the member {@code KEY} of the case's {@code metadata} object;
 *   <li>{@code case.id}: the case's {@code id}.
 * </ul>
 *
 * <p>A value the case does not have (no such field, an input that is not an object, no metadata) renders as nothing,
 * as a missing field does in datagen's templates.
 */
public final class CasePlaceholders {
    /** What a problem says is allowed. */
    public static final String ALLOWED = "{{input}}, {{input.FIELD}}, {{metadata.KEY}} or {{case.id}}";

    private CasePlaceholders() {}

    /** Why {@code name} is not a case placeholder, or empty when it is one. */
    public static Optional<String> problem(String name) {
        Objects.requireNonNull(name, "name");
        if (name.equals("input") || name.equals("case.id") || member(name, "input.") || member(name, "metadata.")) {
            return Optional.empty();
        }
        return Optional.of("unknown placeholder {{" + name + "}}: use " + ALLOWED);
    }

    /** The first problem of a template's placeholders, empty when every one is a case placeholder. */
    public static Optional<String> problem(Template template) {
        return template.placeholders().stream()
                .map(CasePlaceholders::problem)
                .flatMap(Optional::stream)
                .findFirst();
    }

    /**
     * The value of the case placeholder {@code name} in {@code caseTree} (the case line parsed), a missing node when
     * the case has none.
     *
     * @throws IllegalArgumentException when {@code name} is not a case placeholder
     */
    public static JsonNode value(String name, JsonNode caseTree) {
        problem(name).ifPresent(p -> {
            throw new IllegalArgumentException(p);
        });
        if (name.equals("case.id")) {
            return caseTree.path("id");
        }
        if (name.equals("input")) {
            return caseTree.path("input");
        }
        int dot = name.indexOf('.');
        JsonNode parent = caseTree.path(name.substring(0, dot));
        return parent.isObject() ? parent.path(name.substring(dot + 1)) : MissingNode.getInstance();
    }

    private static boolean member(String name, String prefix) {
        return name.startsWith(prefix) && name.length() > prefix.length() && name.indexOf('.', prefix.length()) < 0;
    }
}
