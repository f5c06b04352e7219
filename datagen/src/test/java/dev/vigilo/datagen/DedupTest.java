package dev.vigilo.datagen;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The dedup step's text normalisation, MinHash estimate and thresholds, and its pipeline keys. */
class DedupTest {
    @TempDir
    Path dir;

    @Test
    void normalisedTextIsNfkcCaseFoldedWithWhitespaceCollapsed() {
        assertThat(DedupText.normalise("  Ｑｕｅｓｔｉｏｎ\tONE\n\u00A0 two  ")).isEqualTo("question one two");
        assertThat(DedupText.normalise("Straße")).isEqualTo(DedupText.normalise("STRASSE"));
        assertThat(DedupText.exactKey("What  is 2+2?")).isEqualTo(DedupText.exactKey("what is 2+2?"));
        assertThat(DedupText.exactKey("what is 2+2?")).isNotEqualTo(DedupText.exactKey("what is 2+3?"));
        assertThat(DedupText.text(null)).isEmpty();
        assertThat(DedupText.text(Json.MAPPER.getNodeFactory().numberNode(7))).isEqualTo("7");
    }

    @Test
    void minHashEstimatesJaccardOfWordFiveGrams() {
        String base = words("alpha", 40);
        String near = base.substring(0, base.lastIndexOf(' ')) + " omega"; // 35 of 37 shingles shared: 0.946
        String other = words("beta", 40);
        int nearMatches = MinHash.matches(MinHash.signature(base), MinHash.signature(near.toUpperCase()));
        assertThat(nearMatches).isGreaterThanOrEqualTo(MinHash.minMatches(new BigDecimal("0.85")));
        assertThat(MinHash.matches(MinHash.signature(base), MinHash.signature(other)))
                .isLessThan(MinHash.minMatches(new BigDecimal("0.3")));
        assertThat(MinHash.matches(MinHash.signature(base), MinHash.signature(base)))
                .isEqualTo(MinHash.HASHES);
        // Short texts are one shingle; the same signature in every process (fixed constants).
        assertThat(MinHash.signature("Two  words")).containsExactly(MinHash.signature("two words"));
        assertThat(MinHash.fromHex(MinHash.toHex(MinHash.signature(near)))).containsExactly(MinHash.signature(near));
    }

    @Test
    void thresholdIsAnExactIntegerTestAndBandsFitIt() {
        assertThat(MinHash.minMatches(new BigDecimal("0.85"))).isEqualTo(109); // 108.8 rounded up
        assertThat(MinHash.minMatches(new BigDecimal("0.5"))).isEqualTo(64);
        assertThat(MinHash.minMatches(BigDecimal.ONE)).isEqualTo(128);
        assertThat(MinHash.rowsPerBand(new BigDecimal("0.85"))).isEqualTo(4);
        assertThat(MinHash.rowsPerBand(new BigDecimal("0.5"))).isEqualTo(2);
        assertThat(MinHash.rowsPerBand(new BigDecimal("0.2"))).isEqualTo(1);
        assertThat(MinHash.rowsPerBand(new BigDecimal("0.99"))).isEqualTo(8);
    }

    @Test
    void decisionTagsReadBack() {
        long[] sig = MinHash.signature("some text to keep");
        DedupDecision kept =
                DedupDecision.fromTags(Json.canonical(DedupDecision.kept(sig).tags()));
        assertThat(kept.duplicate()).isFalse();
        assertThat(kept.signature()).containsExactly(sig);
        DedupDecision dup = DedupDecision.fromTags(Json.canonical(
                DedupDecision.duplicate(DedupSpec.Method.MINHASH, "s1", 121).tags()));
        assertThat(dup.duplicateOf()).isEqualTo("s1");
        assertThat(dup.similarity()).isEqualTo("0.9453125");
        assertThat(DedupDecision.fromTags("{\"dedup\":{\"version\":2,\"method\":\"exact\",\"key\":\"k\"}}"))
                .isNull();
        assertThat(DedupDecision.fromTags("{\"chat\":{}}")).isNull();
    }

    @Test
    void pipelineKeysAreCheckedWithTheirPlace() throws Exception {
        Files.writeString(dir.resolve("seeds.jsonl"), "{\"q\": \"x\"}\n");
        PipelineSpec ok = parse("""
                input: seeds.jsonl
                steps:
                  - {name: a, kind: dedup, field: q}
                  - {name: b, kind: dedup, field: q, method: minhash}
                  - {name: c, kind: dedup, field: q, method: minhash, threshold: 0.9}
                """);
        assertThat(ok.steps().get(0).dedup()).isEqualTo(new DedupSpec("q", DedupSpec.Method.EXACT, null));
        assertThat(ok.steps().get(1).dedup().threshold()).isEqualByComparingTo("0.85");
        assertThat(ok.steps().get(2).dedup().threshold()).isEqualByComparingTo("0.9");
        assertThatThrownBy(() -> parse("""
                        input: seeds.jsonl
                        steps:
                          - {name: a, kind: dedup, field: q, threshold: 0.9}
                        """))
                .hasMessageEndingWith(
                        "/p.yaml:3:49: steps[0].threshold: applies to method minhash only; remove it or set"
                                + " method: minhash");
        assertThatThrownBy(() -> parse("""
                        input: seeds.jsonl
                        steps:
                          - {name: a, kind: dedup, field: q, method: minhash, threshold: 1.5}
                        """))
                .hasMessageEndingWith("/p.yaml:3:66: steps[0].threshold: must be a number in (0, 1], got 1.5");
        assertThatThrownBy(() -> parse("""
                        input: seeds.jsonl
                        steps:
                          - {name: a, kind: dedup, field: q, method: fuzzy}
                        """))
                .hasMessageEndingWith(
                        "/p.yaml:3:46: steps[0].method: unknown dedup method \"fuzzy\"; use exact or minhash");
        assertThatThrownBy(() -> parse("""
                        input: seeds.jsonl
                        steps:
                          - {name: a, kind: dedup}
                        """)).hasMessageEndingWith("/p.yaml:3:5: steps[0].field: is required");
    }

    private PipelineSpec parse(String yaml) throws Exception {
        Path p = dir.resolve("p.yaml");
        Files.writeString(p, yaml);
        return PipelineParser.parse(p);
    }

    static String words(String prefix, int n) {
        List<String> w = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            w.add(prefix + i);
        }
        return String.join(" ", w);
    }
}
