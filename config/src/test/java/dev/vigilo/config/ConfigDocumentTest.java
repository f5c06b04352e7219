package dev.vigilo.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vigilo.common.errors.InvalidInputException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class ConfigDocumentTest {
    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void yamlNodesKnowWhereTheyStartAndMissingOnesNameTheirNearestAncestor() {
        ConfigDocument doc = ConfigDocument.yamlOrJson(
                utf8("name: p\ngates:\n  - name: g\n    required: [a, b]\n"), "p.yaml", ReadOptions.lenient());
        KeyPath gate = KeyPath.root().key("gates").index(0);
        assertThat(doc.position(gate.key("name"))).contains(new Position(3, 11));
        assertThat(doc.position(gate.key("required").index(1))).contains(new Position(4, 19));
        assertThat(doc.where(gate.key("min_pass_rate"))).isEqualTo("p.yaml:3:5");
        assertThat(doc.root().at("/gates/0/required/1").asText()).isEqualTo("b");
    }

    @Test
    void jsonIsReadAsJsonWithItsPositions() {
        ConfigDocument doc =
                ConfigDocument.yamlOrJson(utf8("{\"a\": {\"b\": [1, 22]}}"), "--profile", ReadOptions.lenient());
        assertThat(doc.where(KeyPath.root().key("a").key("b").index(1))).isEqualTo("--profile:1:17");
        assertThatThrownBy(() -> ConfigDocument.yamlOrJson(utf8("{\"a\": "), "x.json", ReadOptions.lenient()))
                .isInstanceOf(ConfigSyntaxException.class)
                .satisfies(e -> assertThat(((ConfigSyntaxException) e).format()).isEqualTo("JSON"));
    }

    @Test
    void aSyntaxErrorIsOneLineWithItsPlace() {
        assertThatThrownBy(() -> ConfigDocument.yaml("a: [unclosed\nb: 1\n", "p.yaml", ReadOptions.lenient()))
                .isInstanceOf(ConfigSyntaxException.class)
                .hasMessageMatching("p\\.yaml:\\d+:\\d+: not valid YAML: [^\\n]+")
                .satisfies(
                        e -> assertThat(((ConfigSyntaxException) e).position()).isPresent());
    }

    @Test
    void aLimitOfTheParserIsSaidInPlainWordsWhereItWasHit() {
        String deep = "a: " + "[".repeat(1001) + "]".repeat(1001) + "\n";
        assertThatThrownBy(() -> ConfigDocument.yaml(deep, "p.yaml", ReadOptions.lenient()))
                .isInstanceOf(ConfigSyntaxException.class)
                .hasMessage("p.yaml:1:1003: not valid YAML: nested deeper than 1000 levels; flatten it")
                .satisfies(
                        e -> assertThat(((ConfigSyntaxException) e).isLimit()).isTrue());
    }

    @Test
    void strictDocumentsRefuseDuplicateKeysAndLenientOnesKeepTheLast() {
        ReadOptions strict =
                new ReadOptions(ReadOptions.lenient().limits(), true, 0, 0, "a value longer than this reader accepts");
        assertThatThrownBy(() -> ConfigDocument.yamlOrJson(utf8("a: 1\na: 2\n"), "p.yaml", strict))
                .isInstanceOf(ConfigSyntaxException.class)
                .hasMessageContaining("p.yaml:");
        assertThat(ConfigDocument.yamlOrJson(utf8("a: 1\na: 2\n"), "p.yaml", ReadOptions.lenient())
                        .root()
                        .get("a")
                        .asInt())
                .isEqualTo(2);
    }

    @Test
    void tomlHasNoNodePositionsSoProblemsAreLocatedByKeyPath() {
        ConfigDocument doc = ConfigDocument.toml(utf8("[stores.s]\nkind = \"local\"\n"), "storage config /x.toml");
        assertThat(doc.position(KeyPath.root().key("stores").key("s"))).isEmpty();
        ConfigReader reader = ConfigReader.firstProblem(doc, p -> new InvalidInputException(p.toString()));
        assertThatThrownBy(() -> reader.problem(KeyPath.root().key("stores").key("a b"), "bad"))
                .isInstanceOf(InvalidInputException.class)
                .hasMessage("storage config /x.toml: stores.\"a b\": bad");
        assertThat(ConfigDocument.toml(new byte[0], "w").root().isObject()).isTrue();
        assertThatThrownBy(() -> ConfigDocument.toml(utf8("a = [\n"), "execution config /e.toml"))
                .isInstanceOf(ConfigSyntaxException.class)
                .hasMessageStartingWith("execution config /e.toml:")
                .hasMessageContaining(": not valid TOML: ");
    }

    @Test
    void aCollectingReaderKeepsEveryProblemUpToItsBoundInOrder() {
        ConfigDocument doc =
                ConfigDocument.yamlOrJson(utf8("a: x\nb: [1, 2]\nc: {d: 7}\n"), "f.yaml", ReadOptions.lenient());
        ConfigReader reader = ConfigReader.collecting(doc, 2);
        KeyPath top = KeyPath.root();
        assertThat(reader.integer(doc.root().get("a"), top.key("a"), 1, 5, 3)).isEqualTo(3);
        assertThat(reader.text(doc.root().get("b"), top.key("b"), true)).isEmpty();
        assertThat(reader.bool(doc.root().at("/c/d"), top.key("c").key("d"), false))
                .isFalse();
        assertThat(reader.problemLines())
                .containsExactly(
                        "f.yaml:1:4: a: must be an integer in [1, 5], got \"x\"",
                        "f.yaml:2:4: b: must be a string, got a list");
        assertThat(reader.failure(top.key("z"), "more").getMessage())
                .isEqualTo("f.yaml:1:4: a: must be an integer in [1, 5], got \"x\"; f.yaml:2:4: b: must be a string,"
                        + " got a list");
    }

    @Test
    void typedReadsCheckRangesChoicesListsAndKeys() {
        ConfigDocument doc = ConfigDocument.yamlOrJson(
                utf8("kind: rpc\nn: 2\ntags: [a, a]\nextra: 1\n"), "f.yaml", ReadOptions.lenient());
        ConfigReader reader = ConfigReader.collecting(doc, 50);
        KeyPath top = KeyPath.root();
        var kinds = new java.util.LinkedHashMap<String, Integer>();
        kinds.put("command", 1);
        kinds.put("http", 2);
        assertThat(reader.oneOf(doc.root().get("kind"), top.key("kind"), true, "agent kind", kinds))
                .isEmpty();
        assertThat(reader.number(doc.root().get("n"), top.key("n"), 0, 1)).isEqualTo(Optional.empty());
        assertThat(reader.distinctStrings(doc.root().get("tags"), top.key("tags"), "must be a list"))
                .containsExactly("a");
        reader.allowKeys(doc.root(), top, List.of("kind", "n", "tags"));
        assertThat(reader.problemLines())
                .containsExactly(
                        "f.yaml:1:7: kind: unknown agent kind \"rpc\"; use command or http",
                        "f.yaml:2:4: n: must be a number in [0, 1]",
                        "f.yaml:3:11: tags[1]: \"a\" is listed twice",
                        "f.yaml:4:8: extra: unknown key; allowed here: kind, n, tags");
    }

    @Test
    void decimalsAreReadExactlyAsWrittenAndRefusedBelowTheirMinimum() {
        ConfigDocument doc = ConfigDocument.yamlOrJson(
                utf8("a: 0.15\nb: 12\nc: -0.5\nd: true\ne: x\nf: 1.5e-7\n"), "f.yaml", ReadOptions.lenient());
        ConfigReader reader = ConfigReader.collecting(doc, 50);
        KeyPath top = KeyPath.root();
        java.math.BigDecimal zero = java.math.BigDecimal.ZERO;
        assertThat(reader.decimal(doc.root().get("a"), top.key("a"), true, zero))
                .contains(new java.math.BigDecimal("0.15"));
        assertThat(reader.decimal(doc.root().get("b"), top.key("b"), true, zero))
                .contains(new java.math.BigDecimal("12"));
        assertThat(reader.decimal(doc.root().get("f"), top.key("f"), true, zero))
                .contains(new java.math.BigDecimal("1.5E-7"));
        assertThat(reader.decimal(doc.root().get("c"), top.key("c"), true, zero))
                .isEmpty();
        assertThat(reader.decimal(doc.root().get("d"), top.key("d"), true, zero))
                .isEmpty();
        assertThat(reader.decimal(doc.root().get("e"), top.key("e"), true, zero))
                .isEmpty();
        assertThat(reader.decimal(doc.root().get("g"), top.key("g"), true, zero))
                .isEmpty();
        assertThat(reader.decimal(doc.root().get("h"), top.key("h"), false, zero))
                .isEmpty();
        assertThat(reader.problemLines())
                .containsExactly(
                        "f.yaml:3:4: c: must be a number >= 0, got -0.5",
                        "f.yaml:4:4: d: must be a number >= 0, got true",
                        "f.yaml:5:4: e: must be a number >= 0, got \"x\"",
                        "f.yaml:1:1: g: is required");
    }
}
