package dev.vigilo.common.errors;

import com.fasterxml.jackson.core.io.JsonStringEncoder;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The secret values of one run or pipeline (the values of the environment variables its {@code *_env} keys name)
 * and the one way Vigilo masks them before anything is written: transcripts, receipts, results, checkpoint logs,
 * logs and messages. Every occurrence of a value becomes {@link Secrets#MASK}, in each spelling the value can take in
 * text: as is; JSON-escaped (also with {@code \/}, and with non-ASCII characters as {@code \\uXXXX}); and URL-encoded
 * (RFC 3986 percent-encoding and form encoding, with upper- or lower-case hex digits). A JSON tree is masked in its
 * strings, field names and numbers, so every spelling of its serialization is covered.
 *
 * <p>A value of at least {@link #MIN_ANYWHERE} characters is masked wherever it occurs, also inside a longer word. A
 * shorter one is masked only where it stands alone (no letter or digit right before or after it): masking a key such
 * as {@code EMPTY} or {@code test} inside every word containing it would rewrite ordinary text, and no endpoint issues
 * keys that short. Empty values are ignored.
 *
 * <p>Text must be masked before it is cut to a bound (a cut can leave part of a value that no longer matches); where
 * the cut happens before the text can be seen (a bounded tail of a stream), {@link #maskCut} also masks what the cut
 * left of a value at the edges. Immutable and thread-safe; {@link #toString()} never shows a value.
 */
public final class SecretValues {
    /** No secrets: masks nothing. */
    public static final SecretValues NONE = new SecretValues(new TreeSet<>());

    /** Values at least this long are masked inside words too; shorter ones only where they stand alone. */
    public static final int MIN_ANYWHERE = 8;

    /** The suffix of the configuration keys that name an environment variable holding a secret. */
    public static final String ENV_KEY_SUFFIX = "_env";

    private static final String WORD_CHAR = "[\\p{L}\\p{N}]";

    private final Set<String> values;
    /** Every spelling of every value, longest first, so a longer spelling wins over a shorter one inside it. */
    private final List<String> spellings;

    private final Pattern pattern;

    private SecretValues(TreeSet<String> values) {
        this.values = values;
        // spelling -> whether it is masked inside words too (it spells a value of at least MIN_ANYWHERE characters)
        Map<String, Boolean> all = new HashMap<>();
        for (String v : values) {
            for (String s : spellings(v)) {
                all.merge(s, v.length() >= MIN_ANYWHERE, Boolean::logicalOr);
            }
        }
        List<String> sorted = new ArrayList<>(all.keySet());
        sorted.sort(Comparator.comparingInt(String::length).reversed().thenComparing(Comparator.naturalOrder()));
        this.spellings = List.copyOf(sorted);
        this.pattern = sorted.isEmpty() ? null : pattern(sorted, all);
    }

    /** The secrets {@code values} (null and empty ones are ignored). */
    public static SecretValues of(Collection<String> values) {
        TreeSet<String> set = new TreeSet<>();
        for (String v : values) {
            if (v != null && !v.isEmpty()) {
                set.add(v);
            }
        }
        return set.isEmpty() ? NONE : new SecretValues(set);
    }

    /**
     * The values of the variables {@code document}'s {@code *_env} keys name: every object field, at any depth,
     * whose name ends in {@value #ENV_KEY_SUFFIX} and whose value is a string naming a variable that {@code
     * variables} sets. Variables that are not set are skipped (whoever needs one reports it missing).
     */
    public static SecretValues ofEnvKeys(JsonNode document, Function<String, String> variables) {
        Objects.requireNonNull(variables, "variables");
        List<String> found = new ArrayList<>();
        collectEnvKeys(document, variables, found);
        return of(found);
    }

    private static void collectEnvKeys(JsonNode node, Function<String, String> variables, List<String> out) {
        if (node == null) {
            return;
        }
        if (node.isArray()) {
            for (JsonNode e : node) {
                collectEnvKeys(e, variables, out);
            }
        } else if (node.isObject()) {
            for (Iterator<Map.Entry<String, JsonNode>> it = node.fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> f = it.next();
                if (f.getKey().endsWith(ENV_KEY_SUFFIX) && f.getValue().isTextual()) {
                    out.add(variables.apply(f.getValue().textValue()));
                } else {
                    collectEnvKeys(f.getValue(), variables, out);
                }
            }
        }
    }

    /** These secrets and {@code other}'s. */
    public SecretValues and(SecretValues other) {
        if (other.values.isEmpty() || values.containsAll(other.values)) {
            return this;
        }
        if (values.isEmpty()) {
            return other;
        }
        TreeSet<String> union = new TreeSet<>(values);
        union.addAll(other.values);
        return new SecretValues(union);
    }

    /** These secrets and {@code value} (ignored when null or empty). */
    public SecretValues and(String value) {
        return and(of(value == null ? List.of() : List.of(value)));
    }

    /** Whether there is nothing to mask. */
    public boolean isEmpty() {
        return values.isEmpty();
    }

    /** How many distinct values there are. */
    public int size() {
        return values.size();
    }

    /** Whether {@code text} holds a value in one of its spellings where {@link #mask} would replace it. */
    public boolean appearsIn(String text) {
        return text != null && candidate(text) && pattern.matcher(text).find();
    }

    /** {@code text} with every value masked; {@code null} stays {@code null}. */
    public String mask(String text) {
        if (text == null || !candidate(text)) {
            return text;
        }
        return pattern.matcher(text).replaceAll(Matcher.quoteReplacement(Secrets.MASK));
    }

    /**
     * {@code text}, a part cut out of a longer text, with every value masked, and also a beginning that is the end
     * of a value's spelling ({@code cutBefore}: something came before it) and an end that is the beginning of one
     * ({@code cutAfter}).
     */
    public String maskCut(String text, boolean cutBefore, boolean cutAfter) {
        String masked = mask(text);
        if (masked == null || isEmpty()) {
            return masked;
        }
        if (cutBefore) {
            int cut = 0;
            for (String s : spellings) {
                for (int k = Math.min(s.length() - 1, masked.length()); k > cut; k--) {
                    if (masked.startsWith(s.substring(s.length() - k))) {
                        cut = k;
                        break;
                    }
                }
            }
            if (cut > 0) {
                masked = Secrets.MASK + masked.substring(cut);
            }
        }
        if (cutAfter) {
            int cut = 0;
            for (String s : spellings) {
                for (int k = Math.min(s.length() - 1, masked.length()); k > cut; k--) {
                    if (masked.endsWith(s.substring(0, k))) {
                        cut = k;
                        break;
                    }
                }
            }
            if (cut > 0) {
                masked = masked.substring(0, masked.length() - cut) + Secrets.MASK;
            }
        }
        return masked;
    }

    /**
     * {@code tree} with every value masked in its strings, field names and numbers (a number holding one becomes
     * the masked string). The tree itself when nothing needs masking, else a masked copy; {@code tree} is never
     * changed. {@code null} stays {@code null}.
     */
    public JsonNode mask(JsonNode tree) {
        if (tree == null || isEmpty() || !holds(tree)) {
            return tree;
        }
        return copy(tree);
    }

    private boolean holds(JsonNode n) {
        if (n.isTextual()) {
            return appearsIn(n.textValue());
        }
        if (n.isNumber()) {
            return appearsIn(n.asText());
        }
        if (n.isArray()) {
            for (JsonNode e : n) {
                if (holds(e)) {
                    return true;
                }
            }
            return false;
        }
        if (n.isObject()) {
            for (Iterator<Map.Entry<String, JsonNode>> it = n.fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> f = it.next();
                if (appearsIn(f.getKey()) || holds(f.getValue())) {
                    return true;
                }
            }
        }
        return false;
    }

    private JsonNode copy(JsonNode n) {
        JsonNodeFactory f = JsonNodeFactory.instance;
        if (n.isTextual()) {
            return appearsIn(n.textValue()) ? TextNode.valueOf(mask(n.textValue())) : n;
        }
        if (n.isNumber()) {
            return appearsIn(n.asText()) ? TextNode.valueOf(mask(n.asText())) : n;
        }
        if (n.isArray()) {
            ArrayNode a = f.arrayNode(n.size());
            for (JsonNode e : n) {
                a.add(copy(e));
            }
            return a;
        }
        if (n.isObject()) {
            ObjectNode o = f.objectNode();
            for (Iterator<Map.Entry<String, JsonNode>> it = n.fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> e = it.next();
                o.set(mask(e.getKey()), copy(e.getValue()));
            }
            return o;
        }
        return n; // null, boolean, binary, missing: no text of their own
    }

    /** A cheap first look: does any spelling occur at all (the pattern then decides, for short values). */
    private boolean candidate(String text) {
        if (pattern == null) {
            return false;
        }
        for (String s : spellings) {
            if (text.contains(s)) {
                return true;
            }
        }
        return false;
    }

    /** The spellings of {@code v}: as is, JSON-escaped and URL-encoded. */
    static Set<String> spellings(String v) {
        Set<String> out = new LinkedHashSet<>();
        out.add(v);
        String json = new String(JsonStringEncoder.getInstance().quoteAsString(v));
        out.add(json);
        out.add(json.replace("/", "\\/"));
        out.add(asciiJson(json, false));
        out.add(asciiJson(json, true));
        String form = URLEncoder.encode(v, StandardCharsets.UTF_8);
        out.add(form);
        out.add(lowerHex(form));
        String percent = percentEncode(v);
        out.add(percent);
        out.add(lowerHex(percent));
        return out;
    }

    private static String asciiJson(String json, boolean upper) {
        StringBuilder b = new StringBuilder(json.length());
        for (int i = 0; i < json.length(); i++) {
            char c = json.charAt(i);
            if (c < 0x80) {
                b.append(c);
            } else {
                String hex = String.format(Locale.ROOT, "%04x", (int) c);
                b.append("\\u").append(upper ? hex.toUpperCase(Locale.ROOT) : hex);
            }
        }
        return b.toString();
    }

    /** RFC 3986: every byte outside the unreserved characters as %XX (upper-case hex). */
    private static String percentEncode(String v) {
        StringBuilder b = new StringBuilder();
        HexFormat hex = HexFormat.of().withUpperCase();
        for (byte x : v.getBytes(StandardCharsets.UTF_8)) {
            char c = (char) (x & 0xff);
            if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || "-._~".indexOf(c) >= 0) {
                b.append(c);
            } else {
                b.append('%').append(hex.toHexDigits(x));
            }
        }
        return b.toString();
    }

    private static String lowerHex(String encoded) {
        return Pattern.compile("%[0-9A-F]{2}")
                .matcher(encoded)
                .replaceAll(m -> m.group().toLowerCase(Locale.ROOT));
    }

    private static Pattern pattern(List<String> spellings, Map<String, Boolean> anywhere) {
        StringBuilder b = new StringBuilder();
        for (String s : spellings) {
            if (b.length() > 0) {
                b.append('|');
            }
            if (anywhere.get(s)) {
                b.append(Pattern.quote(s));
            } else {
                b.append("(?<!" + WORD_CHAR + ")").append(Pattern.quote(s)).append("(?!" + WORD_CHAR + ")");
            }
        }
        return Pattern.compile(b.toString());
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof SecretValues other && values.equals(other.values);
    }

    @Override
    public int hashCode() {
        return values.hashCode();
    }

    /** How many values, never the values. */
    @Override
    public String toString() {
        return "SecretValues[" + values.size() + (values.size() == 1 ? " value]" : " values]");
    }
}
