package dev.vigilo.plan;

import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.databind.JsonNode;
import dev.vigilo.common.input.InputFiles;
import dev.vigilo.common.input.TextEncoding;
import dev.vigilo.config.ConfigDocument;
import dev.vigilo.config.ConfigReader;
import dev.vigilo.config.ConfigSyntaxException;
import dev.vigilo.config.KeyPath;
import dev.vigilo.config.ReadOptions;
import dev.vigilo.llm.Pricing;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CoderResult;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * The one ingestion path for profiles (docs/formats/plan-profile.md): {@code --profile TEXT} and
 * {@code --profile-file F}, YAML or JSON, all become bytes handed to {@link #parse(byte[])}. Input over
 * {@link Profile#MAX_BYTES} is rejected before parsing; the canonical encoding is checked against the same limit.
 * Every problem found is reported where it is and with its path in the document, read by the shared reader
 * ({@link ConfigReader}) part by part: {@link AgentReader}, {@link EvaluatorReader}, {@link GateReader},
 * {@link LimitReader}, {@link EpochReader}, {@link SandboxReader}. Stateless and thread-safe.
 */
public final class ProfileParser {
    private static final String INLINE = "--profile";
    private static final int MAX_PROBLEMS = 50;
    /** Deepest nesting of mappings and lists a profile may have; real profiles need a handful of levels. */
    private static final int MAX_DEPTH = 64;

    private static final ReadOptions READ = new ReadOptions(
            StreamReadConstraints.builder()
                    .maxStringLength(Profile.MAX_BYTES)
                    .maxNestingDepth(MAX_DEPTH)
                    .build(),
            true,
            Profile.MAX_BYTES + 16,
            20,
            "a value longer than a profile allows");

    private ProfileParser() {}

    /**
     * Reads a profile file (at most {@link Profile#MAX_BYTES}) and parses it like inline text. Anything but a
     * readable regular file is refused before it is opened ({@link InputFiles}): a named pipe would block the open.
     */
    public static Profile parseFile(Path file) {
        Objects.requireNonNull(file, "file");
        InputFiles.problem(file).ifPresent(problem -> {
            throw new ProfileException(List.of("profile: --profile-file " + file + " " + problem
                    + "; give the path of a YAML or JSON profile file"));
        });
        byte[] bytes;
        try (InputStream in = Files.newInputStream(file)) {
            bytes = in.readNBytes(Profile.MAX_BYTES + 1);
        } catch (NoSuchFileException e) {
            throw new ProfileException(List.of("profile: file " + file + " does not exist; check --profile-file"));
        } catch (IOException e) {
            throw new ProfileException(List.of("profile: cannot read " + file + ": " + e.getMessage()));
        }
        return parse(bytes, file.toString());
    }

    /** Parses inline profile text (the value of {@code --profile}). */
    public static Profile parse(String text) {
        Objects.requireNonNull(text, "text");
        return parse(text.getBytes(StandardCharsets.UTF_8));
    }

    /** Parses and validates a YAML or JSON profile given inline ({@code --profile}). */
    public static Profile parse(byte[] input) {
        return parse(input, INLINE);
    }

    /**
     * Parses and validates a YAML or JSON profile.
     *
     * @param source the file name, or {@code --profile} for inline text; syntax errors are reported as
     *               {@code profile: not valid YAML at SOURCE:LINE:COLUMN: problem; fix the syntax}
     * @throws ProfileException listing every problem (at most 50), each as {@code SOURCE:LINE:COLUMN: path: problem}
     */
    public static Profile parse(byte[] input, String source) {
        Objects.requireNonNull(input, "input");
        Objects.requireNonNull(source, "source");
        if (input.length > Profile.MAX_BYTES) {
            throw new ProfileException(List.of(
                    "profile: input is larger than " + Profile.MAX_BYTES + " bytes (8 MiB); shrink the profile"));
        }
        TextEncoding.notUtf8(input, input.length).ifPresent(problem -> {
            throw new ProfileException(List.of("profile: " + source + " " + problem));
        });
        checkUtf8(input, source);
        ConfigDocument document = read(input, source);
        Profile profile = new Walk(ConfigReader.collecting(document, MAX_PROBLEMS)).profile(document.root());
        int encoded = ProfileJson.encode(profile).length;
        if (encoded > Profile.MAX_BYTES) {
            throw new ProfileException(List.of(
                    "profile: canonical encoding is " + encoded + " bytes, over the 8 MiB limit; shrink the profile"));
        }
        return profile;
    }

    /** Malformed UTF-8 is reported at its byte, before a parser turns it into a confusing message. */
    private static void checkUtf8(byte[] input, String source) {
        CharsetDecoder utf8 = StandardCharsets.UTF_8
                .newDecoder()
                .onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT);
        ByteBuffer in = ByteBuffer.wrap(input);
        CharBuffer out = CharBuffer.allocate(8192);
        while (true) {
            CoderResult result = utf8.decode(in, out, true);
            if (result.isError()) {
                int at = in.position();
                int line = 1;
                int lineStart = 0;
                for (int i = 0; i < at; i++) {
                    if (input[i] == '\n') {
                        line++;
                        lineStart = i + 1;
                    }
                }
                throw new ProfileException(List.of("profile: not valid UTF-8 at " + source + ":" + line + ":"
                        + (at - lineStart + 1) + String.format(": byte 0x%02X", input[at] & 0xff)
                        + "; save the profile as UTF-8"));
            }
            if (result.isOverflow()) {
                out.clear();
                continue;
            }
            return;
        }
    }

    /**
     * The document, or one line for a syntax error: {@code profile: not valid YAML at SOURCE:LINE:COLUMN: problem;
     * fix the syntax} (1-based; {@code flatten or shorten it} for a limit of the parser).
     */
    private static ConfigDocument read(byte[] input, String source) {
        ConfigDocument document;
        try {
            document = ConfigDocument.yamlOrJson(input, source, READ);
        } catch (ConfigSyntaxException e) {
            String where = source + e.position().map(p -> ":" + p).orElse("");
            throw new ProfileException(List.of("profile: not valid " + e.format() + " at " + where + ": " + e.problem()
                    + "; " + (e.isLimit() ? "flatten or shorten it" : "fix the syntax")));
        }
        if (document.isEmpty()) {
            throw new ProfileException(List.of("profile: the document is empty; give a YAML or JSON profile"));
        }
        return document;
    }

    /** One validation pass; collects problems instead of stopping at the first. */
    private static final class Walk {
        private final ConfigReader reader;
        private final ProfileFields fields;

        Walk(ConfigReader reader) {
            this.reader = reader;
            this.fields = new ProfileFields(reader);
        }

        Profile profile(JsonNode root) {
            KeyPath top = KeyPath.root();
            if (!root.isObject()) {
                reader.problem(
                        top,
                        "profile: must be a mapping with name, agent, evaluators, gates; got "
                                + ConfigReader.typeOf(root));
                throw new ProfileException(reader.problemLines());
            }
            reader.allowKeys(
                    root,
                    top,
                    List.of(
                            "version",
                            "name",
                            "agent",
                            "evaluators",
                            "gates",
                            "limits",
                            "epochs",
                            "confidence",
                            "pricing",
                            "sandbox",
                            "budget"));
            int version = 1;
            JsonNode v = root.get("version");
            if (v != null) {
                if (!v.isIntegralNumber() || v.asLong() < 1) {
                    reader.problem(top.key("version"), "must be a positive integer");
                } else if (v.asLong() > Profile.VERSION) {
                    reader.problem(
                            top.key("version"),
                            "profile version " + v.asLong() + " is newer than this Vigilo supports (" + Profile.VERSION
                                    + "); upgrade Vigilo");
                } else {
                    version = v.asInt();
                }
            }
            String name = fields.name(root.get("name"), top.key("name"), true);
            Profile.Agent agent = new AgentReader(fields).agent(root.get("agent"));
            List<Profile.Evaluator> evaluators = new EvaluatorReader(fields, agent).evaluators(root.get("evaluators"));
            EpochReader epochReader = new EpochReader(reader);
            Profile.Epochs epochs = epochReader.epochs(root.get("epochs"));
            double confidence = epochReader.confidence(root.get("confidence"));
            List<Profile.Gate> gates = new GateReader(fields).gates(root.get("gates"), evaluators, confidence);
            Profile.Limits limits = new LimitReader(reader).limits(root.get("limits"));
            Pricing pricing = new PricingReader(reader).pricing(root.get("pricing"));
            Profile.Sandbox sandbox = new SandboxReader(reader).sandbox(root.get("sandbox"));
            BudgetReader budgetReader = new BudgetReader(reader);
            Profile.Budget budget = budgetReader.budget(root.get("budget"));
            budgetReader.check(budget, agent, evaluators, pricing);
            for (int i = 0; i < evaluators.size(); i++) {
                if (evaluators.get(i).kind() == Profile.EvaluatorKind.COST) {
                    int index = i;
                    agentModel(agent)
                            .filter(m -> pricing.price(m).isEmpty())
                            .ifPresent(m -> reader.problem(
                                    top.key("evaluators").index(index).key("max_usd"),
                                    "a cost evaluator needs a price for the agent's model \"" + m + "\"; add pricing."
                                            + m + ": {input: ..., output: ...}"));
                }
            }
            if (limits.caseCostUsd().isPresent()) {
                agentModel(agent)
                        .filter(m -> pricing.price(m).isEmpty())
                        .ifPresent(m -> reader.problem(
                                top.key("limits").key("case_cost_usd"),
                                "needs a price for the agent's model \"" + m + "\"; add pricing." + m
                                        + ": {input: ..., output: ...}"));
            }
            if (reader.hasProblems()) {
                throw new ProfileException(reader.problemLines());
            }
            return new Profile(
                    version, name, agent, evaluators, gates, limits, epochs, confidence, pricing, sandbox, budget);
        }

        /** The model an http agent asks for; empty for a command agent (it names no model to price). */
        private static Optional<String> agentModel(Profile.Agent agent) {
            JsonNode model = agent.parameters().get("model");
            return model != null && model.isTextual() ? Optional.of(model.asText()) : Optional.empty();
        }
    }
}
