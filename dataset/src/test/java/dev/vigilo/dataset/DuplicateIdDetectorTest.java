package dev.vigilo.dataset;

import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

class DuplicateIdDetectorTest {

    @Test
    void noDuplicatesInMemoryAndSpilled() {
        for (int buffer : new int[] {1 << 16, 7}) {
            try (DuplicateIdDetector d = new DuplicateIdDetector(buffer)) {
                for (int i = 1; i <= 1000; i++) {
                    d.add("case-" + i, i);
                }
                assertThat(d.firstDuplicate()).isEmpty();
            }
        }
    }

    @Test
    void reportsTheDuplicateWhoseSecondOccurrenceComesFirst() {
        for (int buffer : new int[] {1 << 16, 5}) {
            try (DuplicateIdDetector d = new DuplicateIdDetector(buffer)) {
                d.add("a", 1);
                d.add("b", 2);
                d.add("c", 3);
                d.add("d", 4);
                d.add("c", 5);   // second occurrence at 5
                d.add("a", 6);   // second occurrence at 6
                d.add("e", 7);
                assertThat(d.firstDuplicate()).contains(new DuplicateIdDetector.Candidate(3, 5));
            }
        }
    }

    @Test
    void agreesWithAHashMapOracleOnRandomInputsAcrossSpills() {
        Random random = new Random(42);
        for (int round = 0; round < 200; round++) {
            int n = 1 + random.nextInt(300);
            int alphabet = 1 + random.nextInt(2 * n);
            Map<String, Long> seen = new HashMap<>();
            Optional<DuplicateIdDetector.Candidate> expected = Optional.empty();
            try (DuplicateIdDetector d = new DuplicateIdDetector(1 + random.nextInt(40))) {
                for (long line = 1; line <= n; line++) {
                    String id = "id-" + random.nextInt(alphabet);
                    d.add(id, line);
                    Long first = seen.putIfAbsent(id, line);
                    if (first != null && expected.isEmpty()) {
                        expected = Optional.of(new DuplicateIdDetector.Candidate(first, line));
                    }
                }
                assertThat(d.firstDuplicate()).as("round %d", round).isEqualTo(expected);
            }
        }
    }
}
