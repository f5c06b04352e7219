package dev.vigilo.plan;

import dev.vigilo.common.errors.InvalidInputException;
import java.util.List;

/**
 * The profile document is invalid. Every problem is reported as {@code path: what is wrong}, where path is the
 * location in the document ({@code gates[3].required_evaluators[0]}), or {@code profile} for the document as a whole.
 * Kind INVALID_INPUT; {@link #problems()} lists every problem found.
 */
public final class ProfileException extends InvalidInputException {
    private static final long serialVersionUID = 1L;

    private final List<String> problems;

    public ProfileException(List<String> problems) {
        super(String.join("; ", problems));
        this.problems = List.copyOf(problems);
    }

    /** Every problem found, each naming what, where, and what to do. */
    public List<String> problems() {
        return problems;
    }
}
