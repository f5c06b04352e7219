package dev.vigilo.plan;

import dev.vigilo.dataset.CaseFields;
import java.util.List;
import java.util.Objects;

/**
 * The selection rules, exactly (docs/run-preparation.md, "Selection"):
 * <ul>
 * <li>A selector matches a case when the case's group is in {@code groups} (if given: a case without a group never
 *     matches), the case carries every tag of {@code tags_all} (if given) and at least one tag of {@code tags_any}
 *     (if given). A selector without rules matches every case.</li>
 * <li>An evaluator applies to a case when its {@code applies_to} selector matches, or always when it has none.</li>
 * <li>A gate selects a case when every required evaluator applies to it and the gate's own selector matches.</li>
 * </ul>
 * Stateless and thread-safe.
 */
public final class Selection {
    private Selection() {}

    /** Whether {@code selector} matches a case with these fields. */
    public static boolean matches(Profile.Selector selector, CaseFields fields) {
        Objects.requireNonNull(selector, "selector");
        Objects.requireNonNull(fields, "fields");
        if (!selector.groups().isEmpty()
                && (fields.group().isEmpty()
                        || !selector.groups().contains(fields.group().get()))) {
            return false;
        }
        List<String> tags = fields.tags();
        for (String t : selector.tagsAll()) {
            if (!tags.contains(t)) {
                return false;
            }
        }
        if (!selector.tagsAny().isEmpty()) {
            for (String t : selector.tagsAny()) {
                if (tags.contains(t)) {
                    return true;
                }
            }
            return false;
        }
        return true;
    }

    /** Whether the evaluator applies to a case with these fields. */
    public static boolean applies(Profile.Evaluator evaluator, CaseFields fields) {
        return evaluator.appliesTo().map(s -> matches(s, fields)).orElse(true);
    }

    /** Whether {@code gate} of {@code profile} selects a case with these fields. */
    public static boolean selects(Profile profile, Profile.Gate gate, CaseFields fields) {
        for (String name : gate.requiredEvaluators()) {
            Profile.Evaluator e = profile.evaluator(name)
                    .orElseThrow(() ->
                            new IllegalArgumentException("gate " + gate.name() + " names unknown evaluator " + name));
            if (!applies(e, fields)) {
                return false;
            }
        }
        return matches(gate.selector(), fields);
    }
}
