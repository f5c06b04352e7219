package dev.vigilo.agent;

import java.util.Objects;

/**
 * Why an evaluator could not judge an output.
 *
 * @param type    what kind of failure (its {@link EvaluatorErrorType#code()} is stable)
 * @param message one line: what failed, where (the evaluator's name), and what to do
 */
public record EvaluatorError(EvaluatorErrorType type, String message) {
    public EvaluatorError {
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(message, "message");
    }
}
