package dev.vigilo.dataset;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigilo.storage.Sha256;
import java.security.MessageDigest;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

class DuplicateIdDetectorTest {

    @Test
    void noRepeatsInMemoryAndSpilled() {
        for (int buffer : new int[] {1 << 16, 7}) {
            try (DuplicateIdDetector d = new DuplicateIdDetector(buffer)) {
                for (int i = 1; i <= 1000; i++) {
                    d.add("case-" + i);
                }
                assertThat(d.repeatedFingerprints()).isEmpty();
            }
        }
    }

    @Test
    void agreesWithAHashMapOracleOnRandomInputsAcrossSpills() {
        Random random = new Random(42);
        MessageDigest digest = Sha256.newDigest();
        for (int round = 0; round < 300; round++) {
            int n = 1 + random.nextInt(400);
            int alphabet = 1 + random.nextInt(2 * n);
            Map<String, Integer> occurrences = new HashMap<>();
            try (DuplicateIdDetector d = new DuplicateIdDetector(1 + random.nextInt(50))) {
                for (int i = 0; i < n; i++) {
                    String id = "id-" + random.nextInt(alphabet);
                    d.add(id);
                    occurrences.merge(id, 1, Integer::sum);
                }
                Set<Long> expected = new HashSet<>();
                occurrences.forEach((id, count) -> {
                    if (count > 1) {
                        expected.add(DuplicateIdDetector.fingerprint(digest, id));
                    }
                });
                assertThat(d.repeatedFingerprints()).as("round %d", round).isEqualTo(expected);
            }
        }
    }
}
