package dev.vigilo.config;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.core.exc.StreamConstraintsException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.MissingNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.io.IOException;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.error.MarkedYAMLException;

/**
 * A parsed configuration document: its tree, its name for messages, and where each node starts. YAML and JSON
 * documents know the position of every node (a second pass over the parser's tokens records them by JSON pointer);
 * TOML documents know none (Jackson's TOML parser builds the tree before handing out tokens), so their problems are
 * located by key path alone. A document that does not parse throws {@link ConfigSyntaxException}. Immutable.
 */
public final class ConfigDocument {
    private final String source;
    private final JsonNode root;
    private final Map<String, Position> positions;

    private ConfigDocument(String source, JsonNode root, Map<String, Position> positions) {
        this.source = source;
        this.root = root;
        this.positions = positions;
    }

    /**
     * Reads a YAML or JSON document from bytes: JSON when its first character after a byte order mark and blanks is
     * <code>{</code>, YAML otherwise (YAML is a superset of JSON; the JSON parser gives JSON's messages).
     *
     * @param source the document's name for messages ({@code profile.yaml}, {@code --profile})
     * @throws ConfigSyntaxException when it is not valid YAML or JSON or goes over a limit
     */
    public static ConfigDocument yamlOrJson(byte[] input, String source, ReadOptions options) {
        Objects.requireNonNull(input, "input");
        boolean json = startsWithBrace(input);
        JsonFactory factory = json ? jsonFactory(options) : yamlFactory(options);
        return read(factory, json ? "JSON" : "YAML", source, options, f -> f.createParser(input));
    }

    /**
     * Reads a YAML document from text.
     *
     * @throws ConfigSyntaxException when it is not valid YAML or goes over a limit
     */
    public static ConfigDocument yaml(String text, String source, ReadOptions options) {
        Objects.requireNonNull(text, "text");
        return read(yamlFactory(options), "YAML", source, options, f -> f.createParser(text));
    }

    /**
     * Reads a TOML document ({@code storage.toml}, {@code execution.toml}); an empty document is an empty table. A
     * UTF-8 byte order mark is skipped; text saved as UTF-16 or UTF-32, a byte that is not UTF-8 and a document
     * nested deeper than the parser allows are named as such, where they are.
     *
     * @param where what and which file, for messages (e.g. {@code storage config /etc/vigilo/storage.toml})
     * @throws dev.vigilo.common.errors.InvalidInputException {@code WHERE:LINE:COLUMN: ...} (or {@code WHERE: ...}
     *     when the problem has no place) for text that is not UTF-8 or not valid TOML
     */
    public static ConfigDocument toml(byte[] content, String where) {
        return new ConfigDocument(where, TomlText.parse(content, where), Map.of());
    }

    /** The document's name for messages. */
    public String source() {
        return source;
    }

    /** The tree; a {@link MissingNode} or a null node when the document holds nothing. */
    public JsonNode root() {
        return root;
    }

    /** Whether the document holds nothing (only blanks or comments, or an explicit null). */
    public boolean isEmpty() {
        return root == null || root.isMissingNode() || root.isNull();
    }

    /** Where the node at {@code path} starts, or its nearest ancestor that has a position; empty if none has. */
    public Optional<Position> position(KeyPath path) {
        for (KeyPath p = path; ; p = p.parent()) {
            Position at = positions.get(p.pointer());
            if (at != null) {
                return Optional.of(at);
            }
            if (p.isRoot()) {
                return Optional.empty();
            }
        }
    }

    /** {@code SOURCE:LINE:COLUMN} of the node at {@code path}, or {@code SOURCE} when no position is known. */
    public String where(KeyPath path) {
        return source + position(path).map(p -> ":" + p).orElse("");
    }

    private interface ParserSource {
        JsonParser open(JsonFactory factory) throws IOException;
    }

    private interface Pass<T> {
        T over(JsonParser parser) throws IOException;
    }

    /** One pass over the document; whatever it throws becomes a {@link ConfigSyntaxException}. */
    private static <T> T pass(
            JsonFactory factory, String format, String source, ReadOptions options, ParserSource input, Pass<T> pass) {
        try (JsonParser parser = input.open(factory)) {
            try {
                return pass.over(parser);
            } catch (IOException | RuntimeException e) {
                throw syntaxError(source, format, options, e, parser);
            }
        } catch (ConfigSyntaxException e) {
            throw e;
        } catch (IOException | RuntimeException e) {
            throw syntaxError(source, format, options, e, null);
        }
    }

    private static ConfigDocument read(
            JsonFactory factory, String format, String source, ReadOptions options, ParserSource input) {
        Objects.requireNonNull(source, "source");
        ObjectMapper mapper = new ObjectMapper(factory);
        if (options.strict()) {
            mapper.enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
                    .enable(DeserializationFeature.FAIL_ON_READING_DUP_TREE_KEY);
        }
        JsonNode root = pass(factory, format, source, options, input, mapper::readTree);
        // Second pass: where every node starts, by JSON pointer. For a scalar the context is its container with the
        // current key or index set; for a container's start it is the new container: either way the pointer names the
        // node starting here.
        Map<String, Position> positions = pass(factory, format, source, options, input, parser -> {
            Map<String, Position> out = new HashMap<>();
            JsonToken t;
            while ((t = parser.nextToken()) != null) {
                if (t == JsonToken.FIELD_NAME) {
                    continue;
                }
                JsonLocation at = parser.currentTokenLocation();
                if (at != null && at.getLineNr() > 0 && at.getColumnNr() > 0) {
                    out.putIfAbsent(
                            parser.getParsingContext().pathAsPointer().toString(),
                            new Position(at.getLineNr(), at.getColumnNr()));
                }
            }
            return out;
        });
        return new ConfigDocument(source, root == null ? MissingNode.getInstance() : root, Map.copyOf(positions));
    }

    /**
     * One line for a syntax error: where (1-based) and the parser's problem, nothing more.
     *
     * @param parser the parser that failed, for where it stopped when the error carries no location (a limit is
     *               reported without one); null when there was none
     */
    private static ConfigSyntaxException syntaxError(
            String source, String format, ReadOptions options, Exception e, JsonParser parser) {
        String problem = null;
        boolean limit = false;
        long line = 0;
        long column = 0;
        if (e instanceof JsonProcessingException j) {
            problem = j.getOriginalMessage();
            if (e instanceof StreamConstraintsException over) {
                problem = ParserLimits.describe(over, options.limits(), options.tooLong());
                limit = true;
            }
            JsonLocation at =
                    j.getLocation() != null ? j.getLocation() : parser == null ? null : ParserLimits.lastRead(parser);
            if (at != null) {
                line = at.getLineNr();
                column = at.getColumnNr();
            }
        }
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof MarkedYAMLException marked && marked.getProblem() != null) {
                problem = marked.getProblem();
                if (line <= 0 && marked.getProblemMark() != null) {
                    line = marked.getProblemMark().getLine() + 1L;
                    column = marked.getProblemMark().getColumn() + 1L;
                }
                break;
            }
        }
        if (problem == null) {
            problem = e.getMessage() == null ? e.toString() : e.getMessage();
        }
        Optional<Position> at = line > 0 && column > 0 ? Optional.of(new Position(line, column)) : Optional.empty();
        return new ConfigSyntaxException(source, format, at, firstLine(problem), limit, e);
    }

    static String firstLine(String text) {
        return text == null
                ? "syntax error"
                : text.lines()
                        .map(String::strip)
                        .filter(l -> !l.isEmpty())
                        .findFirst()
                        .orElse("syntax error");
    }

    private static boolean startsWithBrace(byte[] input) {
        int i = 0;
        if (input.length >= 3 && (input[0] & 0xff) == 0xEF && (input[1] & 0xff) == 0xBB && (input[2] & 0xff) == 0xBF) {
            i = 3;
        }
        while (i < input.length && (input[i] == ' ' || input[i] == '\t' || input[i] == '\n' || input[i] == '\r')) {
            i++;
        }
        return i < input.length && input[i] == '{';
    }

    private static JsonFactory jsonFactory(ReadOptions options) {
        var builder = JsonFactory.builder().streamReadConstraints(options.limits());
        if (options.strict()) {
            builder.enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION);
        }
        return builder.build();
    }

    private static JsonFactory yamlFactory(ReadOptions options) {
        LoaderOptions loader = new LoaderOptions();
        if (options.codePointLimit() > 0) {
            loader.setCodePointLimit(options.codePointLimit());
        }
        if (options.maxAliases() > 0) {
            loader.setMaxAliasesForCollections(options.maxAliases());
        }
        var builder = YAMLFactory.builder().loaderOptions(loader).streamReadConstraints(options.limits());
        if (options.strict()) {
            loader.setAllowDuplicateKeys(false);
            builder.enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION);
        }
        return builder.build();
    }
}
