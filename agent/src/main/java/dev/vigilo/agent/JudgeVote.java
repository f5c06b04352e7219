package dev.vigilo.agent;

import java.util.Objects;
import java.util.Optional;
import java.util.OptionalDouble;

/**
 * One judge's part in a panel's result ({@code kind: panel}, docs/formats/agent-protocol.md "Judges"): what each
 * judge said, so agreement across judges can be computed from results.
 *
 * @param judge  the judge's name within the panel
 * @param score  the judge's normalised score in [0, 1]; empty when the judge gave none (unscored, failed)
 * @param reason the judge's reason when it scored, else its error's code and message ({@code unscored: ...});
 *     bounded and masked as a result's reason
 */
public record JudgeVote(String judge, OptionalDouble score, Optional<String> reason) {
    public JudgeVote {
        Objects.requireNonNull(judge, "judge");
        Objects.requireNonNull(score, "score");
        Objects.requireNonNull(reason, "reason");
        if (score.isPresent() && !(score.getAsDouble() >= 0 && score.getAsDouble() <= 1)) {
            throw new IllegalArgumentException("a vote's score must be in [0, 1], got " + score.getAsDouble());
        }
    }
}
