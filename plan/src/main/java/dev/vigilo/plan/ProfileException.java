package dev.vigilo.plan;

import java.util.List;

/**
 * The profile document is invalid. Every problem is reported as {@code path: what is wrong}, where path is the
 * location in the document ({@code gates[3].required_evaluators[0]}), or {@code profile} for the document as a whole.
 */
public final class ProfileException extends PlanValidationException {
    public ProfileException(List<String> problems) {
        super(null, problems);
    }
}
