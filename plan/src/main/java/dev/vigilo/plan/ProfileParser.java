package dev.vigilo.plan;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.core.exc.StreamConstraintsException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import dev.vigilo.agent.Agents;
import dev.vigilo.agent.SafeRegex;
import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.common.input.EndpointUrls;
import dev.vigilo.common.input.InputFiles;
import dev.vigilo.common.input.TextEncoding;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CoderResult;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.error.MarkedYAMLException;

/**
 * The one ingestion path for profiles (docs/formats/plan-profile.md): {@code --profile TEXT} and
 * {@code --profile-file F}, YAML or JSON, all become bytes handed to {@link #parse(byte[])}. Input over
 * {@link Profile#MAX_BYTES} is rejected before parsing; the canonical encoding is checked against the same limit.
 * Every problem found is reported with its path in the document. Stateless and thread-safe.
 */
public final class ProfileParser {
    private static final String INLINE = "--profile";
    private static final int MAX_NAME = 256;
    private static final int MAX_PROBLEMS = 50;
    /** Deepest nesting of mappings and lists a profile may have; real profiles need a handful of levels. */
    private static final int MAX_DEPTH = 64;

    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}");

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
     * @throws ProfileException listing every problem, each as {@code path: problem}
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
        JsonNode root = read(input, source);
        Profile profile = new ProfileParser.Walk().profile(root);
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
     * One line for a syntax error: where (SOURCE:LINE:COLUMN, 1-based) and the parser's problem, nothing more.
     *
     * @param parser the parser that failed, for where it stopped when the error carries no location (a limit of
     *               {@link StreamReadConstraints} is reported without one); null when there was none
     */
    static String syntaxError(String source, boolean json, Exception e, JsonParser parser) {
        String problem = null;
        String advice = "fix the syntax";
        int line = 0;
        int column = 0;
        if (e instanceof JsonProcessingException j) {
            problem = j.getOriginalMessage();
            if (e instanceof StreamConstraintsException limit) {
                problem = limitProblem(limit);
                advice = "flatten or shorten it";
            }
            JsonLocation at = j.getLocation() != null ? j.getLocation() : parser == null ? null : lastRead(parser);
            if (at != null) {
                line = at.getLineNr();
                column = at.getColumnNr();
            }
        }
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof MarkedYAMLException marked && marked.getProblem() != null) {
                problem = marked.getProblem();
                if (line <= 0 && marked.getProblemMark() != null) {
                    line = marked.getProblemMark().getLine() + 1;
                    column = marked.getProblemMark().getColumn() + 1;
                }
                break;
            }
        }
        if (problem == null) {
            problem = e.getMessage() == null ? e.toString() : e.getMessage();
        }
        problem = problem.lines()
                .map(String::strip)
                .filter(l -> !l.isEmpty())
                .findFirst()
                .orElse("syntax error");
        String where = line > 0 ? source + ":" + line + ":" + column : source;
        return "profile: not valid " + (json ? "JSON" : "YAML") + " at " + where + ": " + problem + "; " + advice;
    }

    /**
     * A limit of the parser in plain words; Jackson's message names its own classes ({@code StreamReadConstraints})
     * instead of the document's problem.
     */
    private static String limitProblem(StreamConstraintsException e) {
        String m = String.valueOf(e.getOriginalMessage());
        if (m.startsWith("Document nesting depth")) {
            return "nested deeper than " + MAX_DEPTH + " levels";
        }
        if (m.startsWith("Number value length") || m.startsWith("Number length")) {
            return "a number longer than " + StreamReadConstraints.DEFAULT_MAX_NUM_LEN + " digits";
        }
        return "a value longer than a profile allows";
    }

    /**
     * Where a parser that hit a limit stopped: it has read the character that went over it, so that character is
     * one column before its current location (never before column 1).
     */
    private static JsonLocation lastRead(JsonParser parser) {
        JsonLocation at = parser.currentLocation();
        if (at == null) {
            return null;
        }
        return new JsonLocation(
                at.contentReference(),
                at.getByteOffset(),
                at.getCharOffset(),
                at.getLineNr(),
                Math.max(1, at.getColumnNr() - 1));
    }

    private static JsonNode read(byte[] input, String source) {
        int i = 0;
        if (input.length >= 3 && (input[0] & 0xff) == 0xEF && (input[1] & 0xff) == 0xBB && (input[2] & 0xff) == 0xBF) {
            i = 3;
        }
        while (i < input.length && (input[i] == ' ' || input[i] == '\t' || input[i] == '\n' || input[i] == '\r')) {
            i++;
        }
        if (i == input.length) {
            throw new ProfileException(List.of("profile: the document is empty; give a YAML or JSON profile"));
        }
        boolean json = input[i] == '{';
        StreamReadConstraints limits = StreamReadConstraints.builder()
                .maxStringLength(Profile.MAX_BYTES)
                .maxNestingDepth(MAX_DEPTH)
                .build();
        JsonFactory factory;
        if (json) {
            factory = JsonFactory.builder()
                    .streamReadConstraints(limits)
                    .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
                    .build();
        } else {
            LoaderOptions options = new LoaderOptions();
            options.setCodePointLimit(Profile.MAX_BYTES + 16);
            options.setAllowDuplicateKeys(false);
            options.setMaxAliasesForCollections(20);
            factory = YAMLFactory.builder()
                    .loaderOptions(options)
                    .streamReadConstraints(limits)
                    .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
                    .build();
        }
        ObjectMapper mapper = new ObjectMapper(factory)
                .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
                .enable(DeserializationFeature.FAIL_ON_READING_DUP_TREE_KEY);
        JsonNode node;
        try (JsonParser parser = factory.createParser(input)) {
            try {
                node = mapper.readTree(parser);
            } catch (IOException | RuntimeException e) {
                throw new ProfileException(List.of(syntaxError(source, json, e, parser)));
            }
        } catch (ProfileException e) {
            throw e;
        } catch (IOException | RuntimeException e) {
            throw new ProfileException(List.of(syntaxError(source, json, e, null)));
        }
        if (node == null || node.isMissingNode() || node.isNull()) {
            throw new ProfileException(List.of("profile: the document is empty; give a YAML or JSON profile"));
        }
        return node;
    }

    /** One validation pass; collects problems instead of stopping at the first. */
    private static final class Walk {
        private final List<String> problems = new ArrayList<>();

        Profile profile(JsonNode root) {
            if (!root.isObject()) {
                fail("profile", "must be a mapping with name, agent, evaluators, gates; got " + type(root));
            }
            allow(root, "profile", "version", "name", "agent", "evaluators", "gates", "limits");
            int version = 1;
            JsonNode v = root.get("version");
            if (v != null) {
                if (!v.isIntegralNumber() || v.asLong() < 1) {
                    problem("version", "must be a positive integer");
                } else if (v.asLong() > Profile.VERSION) {
                    problem(
                            "version",
                            "profile version " + v.asLong() + " is newer than this Vigilo supports (" + Profile.VERSION
                                    + "); upgrade Vigilo");
                } else {
                    version = v.asInt();
                }
            }
            String name = name(root.get("name"), "name", true);
            Profile.Agent agent = agent(root.get("agent"));
            List<Profile.Evaluator> evaluators = evaluators(root.get("evaluators"));
            List<Profile.Gate> gates = gates(root.get("gates"), evaluators);
            Profile.Limits limits = limits(root.get("limits"));
            if (!problems.isEmpty()) {
                throw new ProfileException(problems);
            }
            return new Profile(version, name, agent, evaluators, gates, limits);
        }

        private Profile.Agent agent(JsonNode node) {
            ObjectNode out = JsonNodeFactory.instance.objectNode();
            if (node == null) {
                problem("agent", "is required: give kind: command or kind: http");
                return new Profile.Agent(Profile.AgentKind.COMMAND, out);
            }
            if (!node.isObject()) {
                problem("agent", "must be a mapping, got " + type(node));
                return new Profile.Agent(Profile.AgentKind.COMMAND, out);
            }
            String kind = text(node.get("kind"), "agent.kind", true);
            if (kind == null) {
                return new Profile.Agent(Profile.AgentKind.COMMAND, out);
            }
            switch (kind) {
                case "command" -> {
                    allow(node, "agent", "kind", "command", "timeout_seconds", "env", "api_key_env", "max_attempts");
                    out.set("command", argv(node.get("command"), "agent.command"));
                    out.put(
                            "timeout_seconds",
                            intIn(node.get("timeout_seconds"), "agent.timeout_seconds", 1, 3600, 300));
                    out.set("env", env(node.get("env"), "agent.env"));
                    // Written only when given: profiles without it keep their canonical bytes and identity.
                    String keyEnv = keyEnv(node);
                    if (keyEnv != null) {
                        out.put("api_key_env", keyEnv);
                    }
                    maxAttempts(node, out);
                    return new Profile.Agent(Profile.AgentKind.COMMAND, out);
                }
                case "http" -> {
                    allow(
                            node,
                            "agent",
                            "kind",
                            "url",
                            "model",
                            "api_key_env",
                            "timeout_seconds",
                            "connect_timeout_seconds",
                            "max_tokens",
                            "temperature",
                            "system_prompt",
                            "max_attempts");
                    String url = text(node.get("url"), "agent.url", true);
                    if (url != null) {
                        endpointUrl(url, "agent.url");
                        out.put("url", url);
                    }
                    String model = text(node.get("model"), "agent.model", true);
                    out.put("model", model);
                    out.put("api_key_env", keyEnv(node));
                    out.put(
                            "timeout_seconds",
                            intIn(node.get("timeout_seconds"), "agent.timeout_seconds", 1, 3600, 120));
                    out.put(
                            "connect_timeout_seconds",
                            intIn(node.get("connect_timeout_seconds"), "agent.connect_timeout_seconds", 1, 300, 10));
                    JsonNode mt = node.get("max_tokens");
                    if (mt != null) {
                        out.put("max_tokens", intIn(mt, "agent.max_tokens", 1, 1_000_000, 0));
                    }
                    JsonNode t = node.get("temperature");
                    if (t != null) {
                        if (!t.isNumber() || t.asDouble() < 0 || t.asDouble() > 2) {
                            problem("agent.temperature", "must be a number in [0, 2]");
                        } else {
                            out.put("temperature", t.asDouble());
                        }
                    }
                    String sp = text(node.get("system_prompt"), "agent.system_prompt", false);
                    if (sp != null) {
                        out.put("system_prompt", sp);
                    }
                    maxAttempts(node, out);
                    return new Profile.Agent(Profile.AgentKind.HTTP, out);
                }
                default -> {
                    problem("agent.kind", "unknown agent kind \"" + kind + "\"; use command or http");
                    return new Profile.Agent(Profile.AgentKind.COMMAND, out);
                }
            }
        }

        /**
         * Checks an endpoint URL (an http agent's; judges' and tools' when they come): it must parse, be http(s) with
         * a host, and carry no credentials ({@link EndpointUrls}, the check datagen's chat steps make). A refused URL
         * is never echoed, since it may hold a key.
         */
        private void endpointUrl(String url, String path) {
            URI uri;
            try {
                uri = new URI(url);
            } catch (URISyntaxException e) {
                problem(
                        path,
                        "is not a URL (" + e.getReason() + (e.getIndex() >= 0 ? " at index " + e.getIndex() : "")
                                + "); give the endpoint's http:// or https:// URL");
                return;
            }
            Optional<String> credentials = EndpointUrls.credentialsProblem(uri);
            if (credentials.isPresent()) {
                problem(path, credentials.get());
            } else if (!"http".equals(uri.getScheme()) && !"https".equals(uri.getScheme()) || uri.getHost() == null) {
                problem(path, "must be an http:// or https:// URL with a host, got \"" + url + "\"");
            }
        }

        /** {@code api_key_env}: the name of the variable holding a key (never the key), or null when absent. */
        private String keyEnv(JsonNode agent) {
            String keyEnv = text(agent.get("api_key_env"), "agent.api_key_env", false);
            if (keyEnv != null && !keyEnv.matches("[A-Za-z_][A-Za-z0-9_]*")) {
                problem("agent.api_key_env", "must name an environment variable (credentials never go in the profile)");
            }
            return keyEnv;
        }

        /**
         * {@code max_attempts}, written to the canonical form only when it differs from the default: profiles that
         * do not mention it (all profiles written before it existed) keep their canonical bytes and identity, and
         * giving the default explicitly means the same profile.
         */
        private void maxAttempts(JsonNode node, ObjectNode out) {
            int attempts = intIn(
                    node.get("max_attempts"),
                    "agent.max_attempts",
                    1,
                    Agents.MAX_ATTEMPTS,
                    Agents.DEFAULT_MAX_ATTEMPTS);
            if (attempts != Agents.DEFAULT_MAX_ATTEMPTS) {
                out.put("max_attempts", attempts);
            }
        }

        private List<Profile.Evaluator> evaluators(JsonNode node) {
            List<Profile.Evaluator> out = new ArrayList<>();
            if (node == null) {
                problem("evaluators", "is required: give at least one evaluator");
                return out;
            }
            if (!node.isArray()) {
                problem("evaluators", "must be a list, got " + type(node));
                return out;
            }
            if (node.isEmpty()) {
                problem("evaluators", "is empty; give at least one evaluator");
            }
            if (node.size() > Profile.MAX_EVALUATORS) {
                problem(
                        "evaluators",
                        "has " + node.size() + " entries, at most " + Profile.MAX_EVALUATORS + " are allowed");
                return out;
            }
            Set<String> names = new HashSet<>();
            for (int i = 0; i < node.size(); i++) {
                String at = "evaluators[" + i + "]";
                JsonNode e = node.get(i);
                if (!e.isObject()) {
                    problem(at, "must be a mapping, got " + type(e));
                    continue;
                }
                String name = name(e.get("name"), at + ".name", true);
                if (name != null && !names.add(name)) {
                    problem(at + ".name", "duplicate evaluator name \"" + name + "\"; names must be unique");
                }
                String kind = text(e.get("kind"), at + ".kind", true);
                ObjectNode params = JsonNodeFactory.instance.objectNode();
                Profile.EvaluatorKind k = null;
                if (kind != null) {
                    switch (kind) {
                        case "exact_match" -> {
                            k = Profile.EvaluatorKind.EXACT_MATCH;
                            allow(e, at, "name", "kind", "applies_to", "case_sensitive", "trim");
                            params.put("case_sensitive", bool(e.get("case_sensitive"), at + ".case_sensitive", true));
                            params.put("trim", bool(e.get("trim"), at + ".trim", true));
                        }
                        case "contains" -> {
                            k = Profile.EvaluatorKind.CONTAINS;
                            allow(e, at, "name", "kind", "applies_to", "case_sensitive");
                            params.put("case_sensitive", bool(e.get("case_sensitive"), at + ".case_sensitive", true));
                        }
                        case "regex" -> {
                            k = Profile.EvaluatorKind.REGEX;
                            allow(e, at, "name", "kind", "applies_to", "pattern");
                            String p = text(e.get("pattern"), at + ".pattern", false);
                            if (p != null) {
                                // The engine and limits the workers evaluate with: RE2 syntax, linear-time matching.
                                try {
                                    SafeRegex.compile(p);
                                } catch (InvalidInputException x) {
                                    problem(at + ".pattern", x.getMessage());
                                }
                            }
                            params.put("pattern", p);
                        }
                        case "command" -> {
                            k = Profile.EvaluatorKind.COMMAND;
                            allow(
                                    e,
                                    at,
                                    "name",
                                    "kind",
                                    "applies_to",
                                    "command",
                                    "timeout_seconds",
                                    "pass_score",
                                    "env");
                            params.set("command", argv(e.get("command"), at + ".command"));
                            params.put(
                                    "timeout_seconds",
                                    intIn(e.get("timeout_seconds"), at + ".timeout_seconds", 1, 3600, 60));
                            JsonNode ps = e.get("pass_score");
                            double pass = 1.0;
                            if (ps != null) {
                                if (!ps.isNumber() || ps.asDouble() < 0 || ps.asDouble() > 1) {
                                    problem(at + ".pass_score", "must be a number in [0, 1]");
                                } else {
                                    pass = ps.asDouble();
                                }
                            }
                            params.put("pass_score", pass);
                            params.set("env", env(e.get("env"), at + ".env"));
                        }
                        default ->
                            problem(
                                    at + ".kind",
                                    "unknown evaluator kind \"" + kind
                                            + "\"; use exact_match, contains, regex or command");
                    }
                }
                Optional<Profile.Selector> applies = Optional.empty();
                if (e.get("applies_to") != null) {
                    applies = Optional.of(selector(e.get("applies_to"), at + ".applies_to", true));
                }
                if (name != null && k != null) {
                    out.add(new Profile.Evaluator(name, k, params, applies));
                }
            }
            return out;
        }

        private List<Profile.Gate> gates(JsonNode node, List<Profile.Evaluator> evaluators) {
            List<Profile.Gate> out = new ArrayList<>();
            if (node == null) {
                problem("gates", "is required: give at least one gate");
                return out;
            }
            if (!node.isArray()) {
                problem("gates", "must be a list, got " + type(node));
                return out;
            }
            if (node.isEmpty()) {
                problem("gates", "is empty; give at least one gate");
            }
            if (node.size() > Profile.MAX_GATES) {
                problem("gates", "has " + node.size() + " gates, at most " + Profile.MAX_GATES + " are allowed");
                return out;
            }
            Set<String> evaluatorNames = new HashSet<>();
            evaluators.forEach(e -> evaluatorNames.add(e.name()));
            Set<String> names = new HashSet<>();
            for (int i = 0; i < node.size(); i++) {
                String at = "gates[" + i + "]";
                JsonNode g = node.get(i);
                if (!g.isObject()) {
                    problem(at, "must be a mapping, got " + type(g));
                    continue;
                }
                allow(g, at, "name", "required_evaluators", "groups", "tags_all", "tags_any", "min_pass_rate");
                String name = name(g.get("name"), at + ".name", true);
                if (name != null && !names.add(name)) {
                    problem(at + ".name", "duplicate gate name \"" + name + "\"; names must be unique");
                }
                List<String> required = new ArrayList<>();
                JsonNode re = g.get("required_evaluators");
                if (re == null) {
                    problem(at + ".required_evaluators", "is required: list the evaluators this gate needs");
                } else if (!re.isArray() || re.isEmpty()) {
                    problem(at + ".required_evaluators", "must be a non-empty list of evaluator names");
                } else {
                    for (int j = 0; j < re.size(); j++) {
                        String rat = at + ".required_evaluators[" + j + "]";
                        String en = text(re.get(j), rat, true);
                        if (en == null) {
                            continue;
                        }
                        if (!evaluatorNames.contains(en)) {
                            problem(
                                    rat,
                                    "unknown evaluator \"" + en + "\"; define it under evaluators or fix the name");
                        } else if (required.contains(en)) {
                            problem(rat, "evaluator \"" + en + "\" is listed twice");
                        } else {
                            required.add(en);
                        }
                    }
                }
                Profile.Selector sel = selector(g, at, false);
                double rate = 1.0;
                JsonNode mp = g.get("min_pass_rate");
                if (mp == null) {
                    problem(at + ".min_pass_rate", "is required: give the pass threshold in [0, 1]");
                } else if (!mp.isNumber() || mp.asDouble() < 0 || mp.asDouble() > 1 || Double.isNaN(mp.asDouble())) {
                    problem(at + ".min_pass_rate", "must be a number in [0, 1], got " + mp);
                } else {
                    rate = mp.asDouble();
                }
                if (name != null) {
                    out.add(new Profile.Gate(name, required, sel, rate));
                }
            }
            return out;
        }

        private Profile.Limits limits(JsonNode node) {
            if (node == null) {
                return new Profile.Limits(Profile.Limits.DEFAULT_MAX_CASES);
            }
            if (!node.isObject()) {
                problem("limits", "must be a mapping, got " + type(node));
                return new Profile.Limits(1);
            }
            allow(node, "limits", "max_cases");
            JsonNode mc = node.get("max_cases");
            if (mc == null) {
                return new Profile.Limits(Profile.Limits.DEFAULT_MAX_CASES);
            }
            if (!mc.isIntegralNumber() || mc.asLong() < 1 || mc.asLong() > Profile.Limits.MAX_MAX_CASES) {
                problem(
                        "limits.max_cases",
                        "must be an integer in [1, " + Profile.Limits.MAX_MAX_CASES + "], got " + mc);
                return new Profile.Limits(1);
            }
            return new Profile.Limits(mc.asLong());
        }

        /** Reads groups/tags_all/tags_any of {@code node}; {@code only} means no other keys are allowed. */
        private Profile.Selector selector(JsonNode node, String at, boolean only) {
            if (!node.isObject()) {
                problem(at, "must be a mapping with groups, tags_all and/or tags_any, got " + type(node));
                return Profile.Selector.ALL;
            }
            if (only) {
                allow(node, at, "groups", "tags_all", "tags_any");
                if (node.isEmpty()) {
                    problem(at, "is empty; give groups, tags_all or tags_any, or drop applies_to");
                }
            }
            return new Profile.Selector(
                    strings(node.get("groups"), at + ".groups"),
                    strings(node.get("tags_all"), at + ".tags_all"),
                    strings(node.get("tags_any"), at + ".tags_any"));
        }

        private List<String> strings(JsonNode node, String at) {
            if (node == null) {
                return List.of();
            }
            if (!node.isArray() || node.isEmpty()) {
                problem(at, "must be a non-empty list of strings (omit it to match everything)");
                return List.of();
            }
            Set<String> out = new LinkedHashSet<>();
            for (int i = 0; i < node.size(); i++) {
                String s = text(node.get(i), at + "[" + i + "]", true);
                if (s != null && !out.add(s)) {
                    problem(at + "[" + i + "]", "\"" + s + "\" is listed twice");
                }
            }
            return List.copyOf(out);
        }

        private JsonNode argv(JsonNode node, String at) {
            var out = JsonNodeFactory.instance.arrayNode();
            if (node == null) {
                problem(at, "is required: give the program and its arguments as a list");
            } else if (!node.isArray() || node.isEmpty()) {
                problem(at, "must be a non-empty list (program, then arguments)");
            } else {
                for (int i = 0; i < node.size(); i++) {
                    String s = text(node.get(i), at + "[" + i + "]", true);
                    out.add(s);
                }
            }
            return out;
        }

        private JsonNode env(JsonNode node, String at) {
            ObjectNode out = JsonNodeFactory.instance.objectNode();
            if (node == null) {
                return out;
            }
            if (!node.isObject()) {
                problem(at, "must be a mapping of variable names to strings");
                return out;
            }
            List<String> keys = new ArrayList<>();
            node.fieldNames().forEachRemaining(keys::add);
            keys.sort(null);
            for (String k : keys) {
                if (!k.matches("[A-Za-z_][A-Za-z0-9_]*")) {
                    problem(at + "." + k, "is not a valid environment variable name");
                }
                out.put(k, text(node.get(k), at + "." + k, true));
            }
            return out;
        }

        private int intIn(JsonNode node, String at, int min, int max, int dflt) {
            if (node == null) {
                return dflt;
            }
            if (!node.isIntegralNumber() || node.asLong() < min || node.asLong() > max) {
                problem(at, "must be an integer in [" + min + ", " + max + "], got " + node);
                return dflt;
            }
            return node.asInt();
        }

        private boolean bool(JsonNode node, String at, boolean dflt) {
            if (node == null) {
                return dflt;
            }
            if (!node.isBoolean()) {
                problem(at, "must be true or false, got " + node);
                return dflt;
            }
            return node.asBoolean();
        }

        private String name(JsonNode node, String at, boolean required) {
            String s = text(node, at, required);
            if (s != null && !NAME.matcher(s).matches()) {
                problem(
                        at,
                        "\"" + s + "\" is not a valid name: use 1..128 letters, digits, '_', '.', ':' or '-',"
                                + " starting with a letter or digit");
                return null;
            }
            return s;
        }

        private String text(JsonNode node, String at, boolean required) {
            if (node == null || node.isNull()) {
                if (required) {
                    problem(at, "is required");
                }
                return null;
            }
            if (!node.isTextual()) {
                problem(at, "must be a string, got " + type(node));
                return null;
            }
            if (node.asText().isEmpty()) {
                problem(at, "must not be empty");
                return null;
            }
            if (at.endsWith(".name") && node.asText().length() > MAX_NAME) {
                problem(at, "is longer than " + MAX_NAME + " characters");
                return null;
            }
            return node.asText();
        }

        private void allow(JsonNode node, String at, String... keys) {
            Set<String> allowed = Set.of(keys);
            Iterator<Map.Entry<String, JsonNode>> it = node.fields();
            while (it.hasNext()) {
                String k = it.next().getKey();
                if (!allowed.contains(k)) {
                    problem(
                            at.equals("profile") ? k : at + "." + k,
                            "unknown key; allowed here: " + String.join(", ", keys));
                }
            }
        }

        private void problem(String at, String what) {
            if (problems.size() < MAX_PROBLEMS) {
                problems.add(at + ": " + what);
            }
        }

        private void fail(String at, String what) {
            problem(at, what);
            throw new ProfileException(problems);
        }

        private static String type(JsonNode n) {
            return switch (n.getNodeType()) {
                case ARRAY -> "a list";
                case OBJECT -> "a mapping";
                case STRING -> "a string";
                case NUMBER -> "a number";
                case BOOLEAN -> "a boolean";
                case NULL -> "null";
                default -> n.getNodeType().toString().toLowerCase();
            };
        }
    }
}
