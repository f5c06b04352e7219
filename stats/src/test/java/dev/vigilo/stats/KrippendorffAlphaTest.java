package dev.vigilo.stats;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import dev.vigilo.stats.KrippendorffAlpha.Sums;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.OptionalDouble;
import java.util.Random;
import java.util.SplittableRandom;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

class KrippendorffAlphaTest {

    /** Absent judgement in the tables below. */
    private static final double NA = Double.NaN;

    @Test
    void krippendorffsPublishedExample() {
        // K. Krippendorff, "Computing Krippendorff's Alpha-Reliability" (2011), section C: 4 observers (rows) x 12
        // units (columns), values 1..5, NA missing. Published: interval alpha = 0.849 (n = 40 pairable values;
        // unit 12 has one value and is not pairable).
        double[][] observers = {
            {1, 2, 3, 3, 2, 1, 4, 1, 2, NA, NA, NA},
            {1, 2, 3, 3, 2, 2, 4, 1, 2, 5, NA, 3},
            {NA, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, NA},
            {1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, NA},
        };
        List<double[]> units = units(observers);
        Sums sums = sum(units);
        assertThat(sums.n()).isEqualTo(40);
        double alpha = KrippendorffAlpha.of(sums).orElseThrow();
        assertThat(alpha).isCloseTo(0.849, within(0.0005));
        // Exactly 951/1120 (src/test/python/reference_values.py, in rationals), to the nearest double.
        assertThat(alpha).isEqualTo(951.0 / 1120);
        assertThat(alpha).isCloseTo(coincidenceAlpha(units).orElseThrow(), within(1e-14));
    }

    @Test
    void agreesWithTheCoincidenceMatrixDefinitionOnRandomData() {
        for (int seed = 0; seed < 500; seed++) {
            SplittableRandom random = new SplittableRandom(seed);
            int judges = 2 + random.nextInt(5);
            int cases = 1 + random.nextInt(40);
            int style = seed % 3;
            double[][] table = new double[judges][cases];
            for (int j = 0; j < judges; j++) {
                for (int c = 0; c < cases; c++) {
                    table[j][c] = random.nextDouble() < 0.3 ? NA : value(random, style);
                }
            }
            List<double[]> units = units(table);
            OptionalDouble expected = coincidenceAlpha(units);
            OptionalDouble actual = KrippendorffAlpha.of(sum(units));
            assertThat(actual.isPresent()).as("seed %d", seed).isEqualTo(expected.isPresent());
            if (expected.isPresent()) {
                assertThat(actual.getAsDouble()).as("seed %d", seed).isCloseTo(expected.getAsDouble(), within(1e-12));
            }
        }
    }

    @Test
    void sumsOfPartsEqualTheSumsOfTheWholeInAnyOrder() {
        for (int seed = 0; seed < 200; seed++) {
            SplittableRandom random = new SplittableRandom(seed);
            List<Sums> units = new ArrayList<>();
            for (int c = 0, cases = 1 + random.nextInt(60); c < cases; c++) {
                double[] unit = new double[random.nextInt(6)];
                for (int i = 0; i < unit.length; i++) {
                    unit[i] = value(random, seed % 3);
                }
                units.add(Sums.ofUnit(unit));
            }
            Sums whole = units.stream().reduce(Sums.ZERO, Sums::plus);
            // Split into chunks at random points, sum each chunk, and add the chunks' sums in a shuffled order.
            List<Sums> chunks = new ArrayList<>();
            Sums chunk = Sums.ZERO;
            for (Sums unit : units) {
                chunk = chunk.plus(unit);
                if (random.nextInt(4) == 0) {
                    chunks.add(chunk);
                    chunk = Sums.ZERO;
                }
            }
            chunks.add(chunk);
            Collections.shuffle(chunks, new Random(seed));
            Sums settled = chunks.stream().reduce(Sums.ZERO, Sums::plus);
            assertThat(settled).as("seed %d", seed).isEqualTo(whole);
            assertThat(KrippendorffAlpha.of(settled)).isEqualTo(KrippendorffAlpha.of(whole));
        }
    }

    @Test
    void equalValuesLeaveAlphaUndefined() {
        // D_e = 0: no variation at all. 0.1 is not exact in binary; the exact sums still see no spread.
        Sums equal = Sums.ofUnit(0.1, 0.1, 0.1).plus(Sums.ofUnit(0.1, 0.1)).plus(Sums.ofUnit(0.1, 0.1, 0.1, 0.1));
        assertThat(equal.n()).isEqualTo(9);
        assertThat(equal.disagreement()).isEqualTo(BigDecimal.ZERO);
        assertThat(KrippendorffAlpha.of(equal)).isEmpty();
    }

    @Test
    void oneUnitIsAgreementAtChance() {
        // One unit: D_o = D_e (its pairs are all the pairs), so alpha = 0 however the values spread.
        assertThat(KrippendorffAlpha.of(Sums.ofUnit(1, 2, 3)).orElseThrow()).isCloseTo(0.0, within(1e-15));
        assertThat(KrippendorffAlpha.of(Sums.ofUnit(0, 1)).orElseThrow()).isCloseTo(0.0, within(1e-15));
    }

    @Test
    void unitsOfOneValueContributeNothing() {
        assertThat(Sums.ofUnit()).isEqualTo(Sums.ZERO);
        assertThat(Sums.ofUnit(0.7)).isEqualTo(Sums.ZERO);
        assertThat(KrippendorffAlpha.of(Sums.ZERO)).isEmpty();
        assertThat(KrippendorffAlpha.of(Sums.ofUnit(1).plus(Sums.ofUnit(5)))).isEmpty();
        Sums pairable = Sums.ofUnit(1, 1).plus(Sums.ofUnit(0, 0.5));
        assertThat(pairable.plus(Sums.ofUnit(9))).isEqualTo(pairable);
    }

    @Test
    void perfectAndSystematicDisagreement() {
        // Every unit's judges agree, the units differ: alpha = 1.
        Sums perfect = Sums.ofUnit(0, 0).plus(Sums.ofUnit(1, 1)).plus(Sums.ofUnit(0.5, 0.5, 0.5));
        assertThat(KrippendorffAlpha.of(perfect).orElseThrow()).isEqualTo(1.0);
        // The judges always disagree by the whole scale: n = 4, S = 2, Q = 2, W = 2 + 2: 1 - 3 * 4 / (2 * 4) = -0.5.
        Sums opposed = Sums.ofUnit(0, 1).plus(Sums.ofUnit(1, 0));
        assertThat(KrippendorffAlpha.of(opposed).orElseThrow()).isEqualTo(-0.5);
    }

    @Test
    void handWorkedSums() {
        // Unit (1, 2, 4): S = 7, Q = 21, pairs sum_{i != j} = 2 (3 * 21 - 49) = 28, W = 28 / 2 = 14.
        Sums unit = Sums.ofUnit(1, 2, 4);
        assertThat(unit).isEqualTo(new Sums(3, BigDecimal.valueOf(7), BigDecimal.valueOf(21), BigDecimal.valueOf(14)));
    }

    @Test
    void refusesWhatNoScoresHave() {
        assertThatThrownBy(() -> Sums.ofUnit(1, Double.NaN))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("a judge's score must be finite, got NaN");
        assertThatThrownBy(() -> new Sums(-1, BigDecimal.ZERO, BigDecimal.ZERO, BigDecimal.ZERO))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(
                        () -> KrippendorffAlpha.of(new Sums(2, BigDecimal.valueOf(4), BigDecimal.ONE, BigDecimal.ONE)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("inconsistent sums");
    }

    private static double value(SplittableRandom random, int style) {
        return switch (style) {
            case 0 -> random.nextInt(5); // an ordinal-looking 0..4 scale: many ties
            case 1 -> random.nextInt(21) / 20.0; // a normalised score in steps of 0.05
            default -> random.nextDouble() * 10; // continuous
        };
    }

    /** The units of a judges x cases table, missing (NaN) judgements left out. */
    private static List<double[]> units(double[][] table) {
        List<double[]> units = new ArrayList<>();
        for (int c = 0; c < table[0].length; c++) {
            List<Double> unit = new ArrayList<>();
            for (double[] judge : table) {
                if (!Double.isNaN(judge[c])) {
                    unit.add(judge[c]);
                }
            }
            units.add(unit.stream().mapToDouble(Double::doubleValue).toArray());
        }
        return units;
    }

    private static Sums sum(List<double[]> units) {
        return units.stream().map(Sums::ofUnit).reduce(Sums.ZERO, Sums::plus);
    }

    /**
     * A second implementation from Krippendorff's definition: the coincidence matrix o_ck = sum_u (number of c-k pairs
     * of distinct judgements in u) / (m_u - 1) over the distinct values, n_c its margins, and alpha = 1 - (n - 1)
     * sum_{c,k} o_ck (c - k)^2 / sum_{c,k} n_c n_k (c - k)^2. Quadratic in the distinct values, no sums reused.
     */
    private static OptionalDouble coincidenceAlpha(List<double[]> units) {
        Map<Double, Integer> index = new TreeMap<>();
        for (double[] unit : units) {
            if (unit.length >= 2) {
                for (double v : unit) {
                    index.putIfAbsent(v, 0);
                }
            }
        }
        double[] values = new double[index.size()];
        int next = 0;
        for (Map.Entry<Double, Integer> e : index.entrySet()) {
            e.setValue(next);
            values[next++] = e.getKey();
        }
        double[][] o = new double[values.length][values.length];
        for (double[] unit : units) {
            int m = unit.length;
            if (m < 2) {
                continue;
            }
            for (int i = 0; i < m; i++) {
                for (int j = 0; j < m; j++) {
                    if (i != j) {
                        o[index.get(unit[i])][index.get(unit[j])] += 1.0 / (m - 1);
                    }
                }
            }
        }
        double[] margins = new double[values.length];
        double n = 0;
        for (int c = 0; c < values.length; c++) {
            for (int k = 0; k < values.length; k++) {
                margins[c] += o[c][k];
            }
            n += margins[c];
        }
        double observed = 0;
        double expected = 0;
        for (int c = 0; c < values.length; c++) {
            for (int k = 0; k < values.length; k++) {
                double delta = (values[c] - values[k]) * (values[c] - values[k]);
                observed += o[c][k] * delta;
                expected += margins[c] * margins[k] * delta;
            }
        }
        if (n < 2 || expected == 0) {
            return OptionalDouble.empty();
        }
        return OptionalDouble.of(1 - (n - 1) * observed / expected);
    }
}
