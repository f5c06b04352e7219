package dev.vigilo.plan;

import com.fasterxml.jackson.databind.JsonNode;
import dev.vigilo.config.ConfigReader;
import dev.vigilo.config.KeyPath;
import dev.vigilo.stats.Reducer;
import java.util.List;
import java.util.Optional;

/**
 * Reads a profile's optional {@code epochs} and {@code confidence} (docs/formats/plan-profile.md): how many times
 * every case is executed, how its epochs reduce, and the confidence level of every interval the run reports.
 * Absent keys mean what every profile meant before them: one epoch, the mean, 0.95.
 */
final class EpochReader {
    private static final KeyPath EPOCHS = KeyPath.root().key("epochs");
    private static final KeyPath CONFIDENCE = KeyPath.root().key("confidence");

    private final ConfigReader reader;

    EpochReader(ConfigReader reader) {
        this.reader = reader;
    }

    Profile.Epochs epochs(JsonNode node) {
        if (node == null || reader.mapping(node, EPOCHS).isEmpty()) {
            return Profile.Epochs.SINGLE;
        }
        reader.allowKeys(node, EPOCHS, List.of("count", "reducer"));
        int count = reader.integer(node.get("count"), EPOCHS.key("count"), 1, Profile.Epochs.MAX_COUNT, 1);
        Optional<String> text = reader.text(node.get("reducer"), EPOCHS.key("reducer"), false);
        Reducer reducer = Reducer.MEAN;
        if (text.isPresent()) {
            try {
                reducer = Reducer.parse(text.get(), count);
            } catch (IllegalArgumentException e) {
                reader.problem(EPOCHS.key("reducer"), e.getMessage());
            }
        }
        // With one epoch every reducer gives the epoch's own result: one profile, one identity.
        return count == 1 ? Profile.Epochs.SINGLE : new Profile.Epochs(count, reducer);
    }

    double confidence(JsonNode node) {
        return reader.number(node, CONFIDENCE, Profile.MIN_CONFIDENCE, Profile.MAX_CONFIDENCE)
                .orElse(Profile.DEFAULT_CONFIDENCE);
    }
}
