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
                .hasMessage(
                        "p.yaml:4:11: unknown step kind 'teleport'; use one of command, http, chat, template, filter, expand, loop");
    }

    @Test
    void unknownKeysAndMissingKeysAreErrors() {
        assertThatThrownBy(() -> parse(
                        "input: a\nsteps:\n  - name: x\n    kind: template\n    templat: y\n    output_field: o\n"))
                .hasMessageStartingWith("p.yaml:5:")
                .hasMessageContaining("unknown key 'templat'");
        assertThatThrownBy(() -> parse("steps:\n  - {name: x, kind: template, template: y, output_field: o}\n"))
                .hasMessageStartingWith("p.yaml:1:1")
                .hasMessageContaining("missing required key 'input'");
        assertThatThrownBy(() -> parse("input: a\nsteps:\n  - {name: x, kind: command, command: [cat], retries: -1}\n"))
                .hasMessageStartingWith("p.yaml:3:")
                .hasMessageContaining("'retries' must be an integer");
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
