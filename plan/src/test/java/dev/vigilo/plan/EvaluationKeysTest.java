package dev.vigilo.plan;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The profile keys of epochs, reducers, confidence and decisions on bounds (docs/formats/plan-profile.md). */
class EvaluationKeysTest {
    private static final String BASE = "name: p\nagent: {kind: command, command: [a]}\n"
            + "evaluators: [{name: e, kind: exact_match}]\n"
            + "gates: [{name: g, required_evaluators: [e], min_pass_rate: 0.9%s}]\n%s";

    private static Profile parse(String gateExtra, String tail) {
        return ProfileParser.parse(BASE.formatted(gateExtra, tail));
    }

    @Test
    void absentKeysMeanOneEpochTheMeanPointDecisionsAndNinetyFivePercent() {
        Profile p = parse("", "");
        assertThat(p.epochs()).isEqualTo(Profile.Epochs.SINGLE);
        assertThat(p.confidence()).isEqualTo(0.95);
        assertThat(p.gates().get(0).decide()).isEqualTo(Profile.Decide.POINT);
        assertThat(p.gates().get(0).defaultPolicy()).isTrue();
    }

    @Test
    void theKeysAreReadAndEnterTheIdentityOnlyWhenTheyAreNotTheDefault() {
        Profile plain = parse("", "");
        Profile explicitDefaults =
                parse(", decide: point", "epochs: {count: 1, reducer: majority}\nconfidence: 0.95\n");
        assertThat(ProfileJson.sha256(explicitDefaults)).isEqualTo(ProfileJson.sha256(plain));
        assertThat(new String(ProfileJson.encode(explicitDefaults), StandardCharsets.UTF_8))
                .doesNotContain("epochs", "confidence", "decide");

        Profile full = parse(", decide: bound", "epochs: {count: 5, reducer: 'at_least:3'}\nconfidence: 0.99\n");
        assertThat(full.epochs().count()).isEqualTo(5);
        assertThat(full.epochs().reducer().toString()).isEqualTo("at_least:3");
        assertThat(full.confidence()).isEqualTo(0.99);
        Profile.Gate gate = full.gates().get(0);
        assertThat(gate.decide()).isEqualTo(Profile.Decide.BOUND);
        assertThat(gate.confidence()).isEqualTo(0.99);
        String canonical = new String(ProfileJson.encode(full), StandardCharsets.UTF_8);
        assertThat(canonical)
                .contains("\"min_pass_rate\":0.9,\"decide\":\"bound\"}")
                .endsWith("\"limits\":{\"max_cases\":10000000},\"epochs\":{\"count\":5,\"reducer\":\"at_least:3\"},"
                        + "\"confidence\":0.99}");
        // The canonical form reads back to the same profile.
        assertThat(ProfileJson.sha256(ProfileParser.parse(canonical))).isEqualTo(ProfileJson.sha256(full));
        for (Profile other : List.of(
                parse(", decide: bound", ""),
                parse("", "epochs: {count: 5}\n"),
                parse("", "epochs: {count: 5, reducer: any}\n"),
                parse("", "confidence: 0.9\n"))) {
            assertThat(ProfileJson.sha256(other)).isNotEqualTo(ProfileJson.sha256(plain));
        }
    }

    @Test
    void everyReducerSpellingIsAccepted() {
        for (String r : List.of("mean", "majority", "any", "all", "at_least:1", "at_least:4")) {
            Profile p = parse("", "epochs: {count: 4, reducer: '" + r + "'}\n");
            assertThat(p.epochs().reducer().toString()).isEqualTo(r);
        }
    }

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                "|epochs: {count: 0}|--profile:5:17: epochs.count: must be an integer in [1, 100], got 0",
                "|epochs: {count: 101}|--profile:5:17: epochs.count: must be an integer in [1, 100], got 101",
                "|epochs: {count: 5, reducer: median}|--profile:5:29: epochs.reducer: unknown reducer 'median': expected mean, majority, any, all or at_least:K",
                "|epochs: {count: 5, reducer: 'at_least:6'}|--profile:5:29: epochs.reducer: at_least:K needs 1 <= K <= epochs.count (5), got 6",
                "|epochs: {count: 5, reducer: 'at_least:0'}|--profile:5:29: epochs.reducer: at_least:K needs 1 <= K <= epochs.count (5), got 0",
                "|epochs: {count: 5, rounds: 2}|--profile:5:28: epochs.rounds: unknown key; allowed here: count, reducer",
                "|epochs: 5|--profile:5:9: epochs: must be a mapping",
                "|confidence: 0.4999|--profile:5:13: confidence: must be a number in [0.5, 0.999]",
                "|confidence: 1|--profile:5:13: confidence: must be a number in [0.5, 0.999]",
                "|confidence: high|--profile:5:13: confidence: must be a number in [0.5, 0.999]",
                ", decide: maybe||--profile:4:73: gates[0].decide: unknown decision rule \"maybe\"; use point or bound",
            })
    void invalidValuesAreProfileErrorsAtTheirPath(String gateExtra, String tail, String expected) {
        assertThatThrownBy(() -> parse(gateExtra == null ? "" : gateExtra, tail == null ? "" : tail + "\n"))
                .isInstanceOf(ProfileException.class)
                .hasMessageStartingWith(expected);
    }

    @Test
    void seedPerEpochIsAnHttpAgentKey() {
        String http = "name: p\nagent: {kind: http, url: 'http://h/v1', model: m%s}\n"
                + "evaluators: [{name: e, kind: exact_match}]\n"
                + "gates: [{name: g, required_evaluators: [e], min_pass_rate: 1}]\n";
        Profile seeded = ProfileParser.parse(http.formatted(", seed_per_epoch: true"));
        assertThat(seeded.agent().parameters().get("seed_per_epoch").asBoolean())
                .isTrue();
        Profile unseeded = ProfileParser.parse(http.formatted(", seed_per_epoch: false"));
        assertThat(ProfileJson.sha256(unseeded)).isEqualTo(ProfileJson.sha256(ProfileParser.parse(http.formatted(""))));
        assertThatThrownBy(() -> ProfileParser.parse(
                        BASE.formatted("", "").replace("command: [a]", "command: [a], seed_per_epoch: true")))
                .isInstanceOf(ProfileException.class)
                .hasMessageContaining("agent.seed_per_epoch: is for http agents")
                .hasMessageContaining("VIGILO_EPOCH");
    }

    @Test
    void aGateFileCarriesItsPolicyInVersionTwoAndStaysVersionOneWithoutIt() {
        UUID run = UUID.randomUUID();
        Profile.Gate plain = parse("", "").gates().get(0);
        GateFile v1 = new GateFile(run, 0, 1, plain, 7, List.of(new GateFile.ShardCount(0, 7)), Optional.empty());
        String v1Text = new String(v1.encode(), StandardCharsets.UTF_8);
        assertThat(v1Text)
                .startsWith("{\"format\":\"vigilo.plan.gate\",\"version\":1,")
                .doesNotContain("decide");
        assertThat(GateFile.decode(v1.encode(), run, 0)).isEqualTo(v1);

        Profile.Gate bound =
                parse(", decide: bound", "confidence: 0.99\n").gates().get(0);
        GateFile v2 = new GateFile(run, 0, 1, bound, 7, List.of(new GateFile.ShardCount(0, 7)), Optional.empty());
        String v2Text = new String(v2.encode(), StandardCharsets.UTF_8);
        assertThat(v2Text)
                .startsWith("{\"format\":\"vigilo.plan.gate\",\"version\":2,")
                .contains("\"min_pass_rate\":0.9,\"decide\":\"bound\",\"confidence\":0.99,\"selected_cases\":7");
        GateFile read = GateFile.decode(v2.encode(), run, 0);
        assertThat(read.gate().decide()).isEqualTo(Profile.Decide.BOUND);
        assertThat(read.gate().confidence()).isEqualTo(0.99);

        // Version 2 without its keys, or with a rule that does not exist, is a damaged file.
        byte[] noDecide = v2Text.replace("\"decide\":\"bound\",", "").getBytes(StandardCharsets.UTF_8);
        assertThatThrownBy(() -> GateFile.decode(noDecide, run, 0)).hasMessageContaining("decide");
        byte[] maybe = v2Text.replace("\"bound\"", "\"maybe\"").getBytes(StandardCharsets.UTF_8);
        assertThatThrownBy(() -> GateFile.decode(maybe, run, 0)).hasMessageContaining("maybe");
        byte[] v3 = v2Text.replace("\"version\":2", "\"version\":3").getBytes(StandardCharsets.UTF_8);
        assertThatThrownBy(() -> GateFile.decode(v3, run, 0)).hasMessageContaining("upgrade Vigilo");
        byte[] twice = v1Text.replace("\"name\":\"g\",", "\"name\":\"g\",\"name\":\"h\",")
                .getBytes(StandardCharsets.UTF_8);
        assertThatThrownBy(() -> GateFile.decode(twice, run, 0)).hasMessageContaining("name");
    }
}
