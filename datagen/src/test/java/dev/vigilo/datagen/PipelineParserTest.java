package dev.vigilo.datagen;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PipelineParserTest {
    static PipelineSpec parse(String yaml) {
        return PipelineParser.parse("p.yaml", yaml, Path.of("/base"));
    }

    @Test
    void parsesEveryStepKind() {
        PipelineSpec p = parse("""
        name: demo
        input: seeds.jsonl
        id_field: id
        steps:
          - {name: c, kind: command, command: [cat], retries: 2, timeout_seconds: 5, concurrency: 3}
          - {name: h, kind: http, url: "http://x/v1/chat/completions", model: m, prompt: "hi {{a}}", output_field: o}
          - {name: t, kind: template, template: "x{{a}}", output_field: b}
          - {name: f, kind: filter, keep_if: {field: b, equals: xy}}
          - {name: e, kind: expand, field: parts, as: part}
          - name: l
            kind: loop
            max_iterations: 3
            until: {field: done}
            body: {name: lb, kind: command, command: "echo '{}'"}
        """);
        assertThat(p.name()).isEqualTo("demo");
        assertThat(p.input()).isEqualTo(Path.of("/base/seeds.jsonl"));
        assertThat(p.steps())
                .extracting(StepSpec::kind)
                .containsExactly(
                        StepKind.COMMAND,
                        StepKind.HTTP,
                        StepKind.TEMPLATE,
                        StepKind.FILTER,
                        StepKind.EXPAND,
                        StepKind.LOOP);
        assertThat(p.steps().get(0).maxAttempts()).isEqualTo(3);
        assertThat(p.steps().get(5).body().command()).containsExactly("sh", "-c", "echo '{}'");
    }

    @Test
    void invalidYamlReportsLineAndColumn() {
        assertThatThrownBy(() -> parse("input: a\nsteps:\n  - name: x\n    kind: [unclosed\n"))
                .isInstanceOf(PipelineDefinitionException.class)
                .hasMessageStartingWith("p.yaml:4:20: invalid YAML");
    }

    @Test
    void unknownStepKindPointsAtTheKind() {
        assertThatThrownBy(() -> parse("input: a\nsteps:\n  - name: x\n    kind: teleport\n"))
                .isInstanceOf(PipelineDefinitionException.class)
                .hasMessage("p.yaml:4:11: steps[0].kind: unknown step kind \"teleport\"; use command, http, chat,"
                        + " template, filter, expand, loop or dedup")
                .satisfies(e -> {
                    PipelineDefinitionException p = (PipelineDefinitionException) e;
                    assertThat(p.line()).isEqualTo(4);
                    assertThat(p.column()).isEqualTo(11);
                });
    }

    @Test
    void unknownKeysAndMissingKeysAreErrors() {
        assertThatThrownBy(() -> parse(
                        "input: a\nsteps:\n  - name: x\n    kind: template\n    templat: y\n    output_field: o\n"))
                .isInstanceOf(PipelineDefinitionException.class)
                .hasMessage("p.yaml:5:14: steps[0].templat: unknown key; allowed here: name, kind, retries,"
                        + " timeout_seconds, concurrency, template, output_field");
        assertThatThrownBy(() -> parse("steps:\n  - {name: x, kind: template, template: y, output_field: o}\n"))
                .isInstanceOf(PipelineDefinitionException.class)
                .hasMessage("p.yaml:1:1: input: is required");
        assertThatThrownBy(() -> parse("input: a\nsteps:\n  - {name: x, kind: command, command: [cat], retries: -1}\n"))
                .hasMessage("p.yaml:3:55: steps[0].retries: must be an integer in [0, 100], got -1");
        assertThatThrownBy(() -> parse("input: a\nsteps: []\n"))
                .hasMessage("p.yaml:2:8: steps: must be a non-empty list of steps");
        assertThatThrownBy(() -> parse("input: a\nsteps:\n  - {name: x, kind: command, command: [cat, 1]}\n"))
                .hasMessage("p.yaml:3:45: steps[0].command[1]: must be a string, got a number");
    }

    @Test
    void stepNamesLoopsAndConditionsAreCheckedWhereTheyStand() {
        assertThatThrownBy(() -> parse("input: a\nsteps:\n  - {name: x, kind: command, command: [cat]}\n"
                        + "  - {name: x, kind: command, command: [cat]}\n"))
                .hasMessage("p.yaml:4:12: steps[1].name: duplicate step name \"x\" (also at steps[0].name); step names"
                        + " must be unique");
        assertThatThrownBy(() -> parse("input: a\nsteps:\n  - name: l\n    kind: loop\n    until: {field: d}\n"
                        + "    body: {name: b, kind: filter, keep_if: {field: f}}\n"))
                .hasMessage("p.yaml:6:27: steps[0].body.kind: a loop body must be a command, http, chat or template"
                        + " step, not filter");
        assertThatThrownBy(() -> parse("input: a\nsteps:\n  - name: l\n    kind: loop\n    until: {field: d}\n"
                        + "    body: {name: b, kind: command, command: [cat]}\n"))
                .hasMessage("p.yaml:3:5: steps[0].max_iterations: is required: the most iterations, an integer in"
                        + " [1, 10000]");
        assertThatThrownBy(() -> parse("input: a\nsteps:\n  - {name: f, kind: filter, keep_if: {field: a, eq: 1}}\n"))
                .hasMessage("p.yaml:3:53: steps[0].keep_if.eq: unknown key; allowed here: field, equals, at_least,"
                        + " at_most, in");
        assertThatThrownBy(
                        () -> parse(
                                "input: a\nsteps:\n  - {name: f, kind: filter, keep_if: {field: s, at_least: 4, at_most: 2}}\n"))
                .hasMessageContaining("steps[0].keep_if.at_most: must be >= at_least (4), got 2");
        assertThatThrownBy(() ->
                        parse("input: a\nsteps:\n  - {name: f, kind: filter, keep_if: {field: s, at_least: x}}\n"))
                .hasMessageContaining("steps[0].keep_if.at_least: must be a number, got \"x\"");
        assertThatThrownBy(() -> parse("input: a\nsteps:\n  - {name: f, kind: filter, keep_if: {field: s, in: []}}\n"))
                .hasMessageContaining("steps[0].keep_if.in: must be a non-empty list of values, got []");
        assertThatThrownBy(
                        () -> parse("input: a\nname: \"a b\"\nsteps:\n  - {name: x, kind: command, command: [cat]}\n"))
                .hasMessage("p.yaml:2:7: name: \"a b\" is not a valid pipeline name; use letters, digits, '.', '_'"
                        + " or '-'");
    }

    @Test
    void aPipelineNestedTooDeeplySaysWhereInPlainWords() {
        // "x: " is 3 characters: the 1000th bracket, level 1001 (the top mapping is level 1), is in column 1003.
        String yaml = "input: a\nx: " + "[".repeat(1500) + "]".repeat(1500) + "\n";
        assertThatThrownBy(() -> parse(yaml))
                .isInstanceOf(PipelineDefinitionException.class)
                .hasMessage("p.yaml:2:1003: invalid YAML: nested deeper than 1000 levels; flatten it");
    }

    @Test
    void aPipelineFileThatIsNotUtf8SaysWhereOrWhatItIs(@TempDir Path dir) throws Exception {
        byte[] good = "input: seeds.jsonl\nsteps: []\n".getBytes(StandardCharsets.UTF_8);
        byte[] utf16 = new String(good, StandardCharsets.UTF_8).getBytes(StandardCharsets.UTF_16);
        Path wide = Files.write(dir.resolve("wide.yaml"), utf16);
        assertThatThrownBy(() -> PipelineParser.parse(wide))
                .isInstanceOf(PipelineDefinitionException.class)
                .hasMessage(wide + ":1:1: is UTF-16 (big-endian) text (it starts with the byte order mark FE FF);"
                        + " save it as UTF-8");
        Path latin1 = Files.write(
                dir.resolve("latin1.yaml"), "input: a\nname: caf\u00e9\n".getBytes(StandardCharsets.ISO_8859_1));
        assertThatThrownBy(() -> PipelineParser.parse(latin1))
                .isInstanceOf(PipelineDefinitionException.class)
                .hasMessage(latin1 + ":2:10: bytes are not valid UTF-8 (byte 0xe9 at byte offset 9 of the line);"
                        + " save the pipeline as UTF-8");
    }
}
