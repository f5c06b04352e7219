package dev.vigilo.stats;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class ReducerTest {

    /** Epochs from a pattern: P passed (score 1), F failed (score 0), E errored (score 0). */
    private static List<Outcome> epochs(String pattern) {
        List<Outcome> out = new ArrayList<>();
        for (char ch : pattern.toCharArray()) {
            out.add(
                    switch (ch) {
                        case 'P' -> Outcome.pass(1.0);
                        case 'F' -> Outcome.fail(0.0);
                        case 'E' -> Outcome.error();
                        default -> throw new IllegalArgumentException(pattern);
                    });
        }
        return out;
    }

    private static boolean passes(String reducer, int count, String pattern) {
        Outcome reduced = Reducer.parse(reducer, count).reduce(epochs(pattern), 1.0);
        assertThat(reduced.errored()).isFalse();
        return reduced.passed();
    }

    @Test
    void everyReducerOnEveryPassCountOfFiveEpochs() {
        // c passing epochs of 5 (hand-worked from the rules): expected outcome per reducer.
        String[] patterns = {"FFFFF", "PFFFF", "FPFPF", "PPFPF", "PPPFP", "PPPPP"};
        boolean[] mean = {false, false, false, false, false, true};
        boolean[] majority = {false, false, false, true, true, true};
        boolean[] any = {false, true, true, true, true, true};
        boolean[] all = {false, false, false, false, false, true};
        for (int c = 0; c <= 5; c++) {
            String p = patterns[c];
            assertThat(passes("mean", 5, p)).as("mean " + p).isEqualTo(mean[c]);
            assertThat(passes("majority", 5, p)).as("majority " + p).isEqualTo(majority[c]);
            assertThat(passes("any", 5, p)).as("any " + p).isEqualTo(any[c]);
            assertThat(passes("all", 5, p)).as("all " + p).isEqualTo(all[c]);
            for (int k = 1; k <= 5; k++) {
                assertThat(passes("at_least:" + k, 5, p))
                        .as("at_least:" + k + " " + p)
                        .isEqualTo(c >= k);
            }
        }
    }

    @Test
    void majorityNeedsMoreThanHalf() {
        assertThat(passes("majority", 4, "PPFF")).isFalse();
        assertThat(passes("majority", 4, "PPPF")).isTrue();
        assertThat(passes("majority", 2, "PF")).isFalse();
        assertThat(passes("majority", 1, "P")).isTrue();
        assertThat(passes("majority", 1, "F")).isFalse();
    }

    @Test
    void atLeastBoundaries() {
        assertThat(passes("at_least:1", 3, "FFP")).isTrue();
        assertThat(passes("at_least:1", 3, "FFF")).isFalse();
        assertThat(passes("at_least:3", 3, "PPP")).isTrue();
        assertThat(passes("at_least:3", 3, "PPF")).isFalse();
        assertThat(Reducer.parse("at_least:5", 5).k()).isEqualTo(5);
        assertThat(Reducer.atLeast(1, 1).toString()).isEqualTo("at_least:1");
    }

    @Test
    void meanComparesTheMeanScoreWithThePassScore() {
        Reducer mean = Reducer.MEAN;
        List<Outcome> scores = List.of(Outcome.fail(0.5), Outcome.pass(0.9), Outcome.fail(0.4));
        Outcome reduced = mean.reduce(scores, 0.6);
        assertThat(reduced.score()).isEqualTo(0.6); // (0.5 + 0.9 + 0.4) / 3 = 0.6 exactly in decimal
        assertThat(reduced.passed()).isTrue();
        assertThat(mean.reduce(scores, 0.6000000000000001).passed()).isFalse();
        // Three epochs of 0.7 meet a pass score of 0.7 (a floating-point mean is 0.6999999999999998).
        List<Outcome> sevenTenths = List.of(Outcome.fail(0.7), Outcome.fail(0.7), Outcome.fail(0.7));
        assertThat((0.7 + 0.7 + 0.7) / 3).isLessThan(0.7);
        assertThat(mean.reduce(sevenTenths, 0.7).passed()).isTrue();
        assertThat(mean.reduce(sevenTenths, 0.7).score()).isEqualTo(0.7);
        // The mean reducer reads scores, not the epochs' own pass flags.
        assertThat(mean.reduce(List.of(Outcome.pass(0.2)), 0.5).passed()).isFalse();
        assertThat(mean.reduce(List.of(Outcome.fail(0.8)), 0.5).passed()).isTrue();
    }

    @Test
    void theReducedScoreIsTheMeanForEveryReducer() {
        List<Outcome> scores = List.of(Outcome.pass(1.0), Outcome.fail(0.25), Outcome.fail(0.0), Outcome.pass(0.75));
        for (String r : new String[] {"mean", "majority", "any", "all", "at_least:2"}) {
            assertThat(Reducer.parse(r, 4).reduce(scores, 1.0).score()).as(r).isEqualTo(0.5);
        }
    }

    @Test
    void anErroredEpochMakesTheCaseErroredWhateverTheReducer() {
        for (String r : new String[] {"mean", "majority", "any", "all", "at_least:1", "at_least:3"}) {
            for (String p : new String[] {"PPE", "EPP", "EEE", "FEF"}) {
                Outcome reduced = Reducer.parse(r, 3).reduce(epochs(p), 1.0);
                assertThat(reduced.errored()).as(r + " " + p).isTrue();
                assertThat(reduced.passed()).as(r + " " + p).isFalse();
            }
            Outcome clean = Reducer.parse(r, 3).reduce(epochs("PPP"), 1.0);
            assertThat(clean.errored()).as(r).isFalse();
            assertThat(clean.passed()).as(r).isTrue();
        }
        // An errored epoch's own pass flag is not counted.
        Outcome reduced = Reducer.ANY.reduce(List.of(new Outcome(true, 1.0, true)), 1.0);
        assertThat(reduced).isEqualTo(new Outcome(false, 1.0, true));
    }

    @Test
    void parsesExactlyTheCanonicalTexts() {
        for (String text : new String[] {"mean", "majority", "any", "all", "at_least:1", "at_least:7"}) {
            Reducer r = Reducer.parse(text, 7);
            assertThat(r.toString()).isEqualTo(text);
            assertThat(Reducer.parse(r.toString(), 7)).isEqualTo(r).hasSameHashCodeAs(r);
        }
        assertThat(Reducer.parse("mean", 1)).isSameAs(Reducer.MEAN);
        assertThat(Reducer.parse("at_least:2", 3)).isNotEqualTo(Reducer.parse("at_least:3", 3));
        assertThat(Reducer.parse("at_least:3", 3).kind()).isEqualTo(Reducer.Kind.AT_LEAST);
        assertThat(Reducer.ALL.k()).isZero();
    }

    @Test
    void refusesWhatAProfileMustNotSay() {
        assertThatThrownBy(() -> Reducer.parse("at_least:6", 5))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("at_least:K needs 1 <= K <= epochs.count (5), got 6");
        assertThatThrownBy(() -> Reducer.parse("at_least:0", 5))
                .hasMessage("at_least:K needs 1 <= K <= epochs.count (5), got 0");
        for (String text : new String[] {"median", "Mean", " mean", "mean ", "", "at_least", "pass_at:2"}) {
            assertThatThrownBy(() -> Reducer.parse(text, 5))
                    .as(text)
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("expected mean, majority, any, all or at_least:K");
        }
        assertThatThrownBy(() -> Reducer.parse("median", 5))
                .hasMessage("unknown reducer 'median': expected mean, majority, any, all or at_least:K");
        for (String text : new String[] {
            "at_least:", "at_least:x", "at_least:-1", "at_least:+2", "at_least: 2", "at_least:99999999999"
        }) {
            assertThatThrownBy(() -> Reducer.parse(text, 5))
                    .as(text)
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageStartingWith("at_least:K needs an integer K");
        }
        assertThatThrownBy(() -> Reducer.parse("x\u001b[31m", 5)).hasMessageNotContaining("\u001b");
        assertThatThrownBy(() -> Reducer.parse("mean", 0)).hasMessageContaining("epochs.count must be at least 1");
    }

    @Test
    void refusesReductionsItCannotDo() {
        assertThatThrownBy(() -> Reducer.MEAN.reduce(List.of(), 1.0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Reducer.atLeast(3, 3).reduce(epochs("PP"), 1.0))
                .hasMessage("at_least:3 needs at least 3 epochs, got 2");
        assertThatThrownBy(() -> Reducer.MEAN.reduce(epochs("P"), Double.NaN))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new Outcome(true, Double.POSITIVE_INFINITY, false))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
