package dev.vigilo.plan;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.vigilo.common.input.EndpointUrls;
import dev.vigilo.config.ConfigReader;
import dev.vigilo.config.KeyPath;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * The value shapes several parts of a profile share (docs/formats/plan-profile.md): names, argument lists,
 * environment mappings, case selectors. Reports through the profile's collecting {@link ConfigReader}; every read
 * returns what it could read, so the profile's readers carry on and report every problem in one round.
 */
final class ProfileFields {
    private static final int MAX_NAME = 256;
    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}");
    private static final Pattern ENV_NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");

    private final ConfigReader reader;

    ProfileFields(ConfigReader reader) {
        this.reader = reader;
    }

    ConfigReader reader() {
        return reader;
    }

    /** A name of a profile, evaluator or gate: 1..128 letters, digits, '_', '.', ':' or '-'; null when wrong. */
    String name(JsonNode node, KeyPath at, boolean required) {
        String s = reader.text(node, at, required).orElse(null);
        if (s == null) {
            return null;
        }
        // The profile's own name is held to the name pattern alone (as it always was); evaluator and gate names
        // say first that they are too long.
        if (!at.parent().isRoot() && s.length() > MAX_NAME) {
            reader.problem(at, "is longer than " + MAX_NAME + " characters");
            return null;
        }
        if (!NAME.matcher(s).matches()) {
            reader.problem(
                    at,
                    "\"" + s + "\" is not a valid name: use 1..128 letters, digits, '_', '.', ':' or '-',"
                            + " starting with a letter or digit");
            return null;
        }
        return s;
    }

    /** A string, null when absent or wrong. */
    String text(JsonNode node, KeyPath at, boolean required) {
        return reader.text(node, at, required).orElse(null);
    }

    /** A program and its arguments: a required non-empty list of strings. */
    ArrayNode argv(JsonNode node, KeyPath at) {
        ArrayNode out = JsonNodeFactory.instance.arrayNode();
        if (node == null) {
            reader.problem(at, "is required: give the program and its arguments as a list");
        } else if (!node.isArray() || node.isEmpty()) {
            reader.problem(at, "must be a non-empty list (program, then arguments)");
        } else {
            for (int i = 0; i < node.size(); i++) {
                out.add(text(node.get(i), at.index(i), true));
            }
        }
        return out;
    }

    /** Environment variables for a command, by name (sorted, so equal mappings encode alike). */
    ObjectNode env(JsonNode node, KeyPath at) {
        ObjectNode out = JsonNodeFactory.instance.objectNode();
        if (node == null) {
            return out;
        }
        if (!node.isObject()) {
            reader.problem(at, "must be a mapping of variable names to strings");
            return out;
        }
        List<String> keys = new ArrayList<>();
        node.fieldNames().forEachRemaining(keys::add);
        keys.sort(null);
        for (String k : keys) {
            if (!ENV_NAME.matcher(k).matches()) {
                reader.problem(at.key(k), "is not a valid environment variable name");
            }
            out.put(k, text(node.get(k), at.key(k), true));
        }
        return out;
    }

    /** The name of the variable holding a key (never the key), or null when absent. */
    String keyEnv(JsonNode node, KeyPath at) {
        String keyEnv = text(node, at, false);
        if (keyEnv != null && !ENV_NAME.matcher(keyEnv).matches()) {
            reader.problem(at, "must name an environment variable (credentials never go in the profile)");
        }
        return keyEnv;
    }

    /** Reads groups/tags_all/tags_any of {@code node}; {@code only} means no other keys are allowed. */
    Profile.Selector selector(JsonNode node, KeyPath at, boolean only) {
        if (!node.isObject()) {
            reader.problem(
                    at, "must be a mapping with groups, tags_all and/or tags_any, got " + ConfigReader.typeOf(node));
            return Profile.Selector.ALL;
        }
        if (only) {
            reader.allowKeys(node, at, List.of("groups", "tags_all", "tags_any"));
            if (node.isEmpty()) {
                reader.problem(at, "is empty; give groups, tags_all or tags_any, or drop applies_to");
            }
        }
        return new Profile.Selector(
                strings(node, at, "groups"), strings(node, at, "tags_all"), strings(node, at, "tags_any"));
    }

    private List<String> strings(JsonNode parent, KeyPath at, String key) {
        return reader.distinctStrings(
                parent.get(key), at.key(key), "must be a non-empty list of strings (omit it to match everything)");
    }

    /**
     * A required list of 1..{@code max} entries (evaluators, gates): {@code is required: give at least one ONE},
     * {@code must be a list, got ...}, {@code is empty; give at least one ONE}, {@code has N MANY, at most MAX are
     * allowed}. Empty when absent, not a list or too long (nothing of it can be read); an empty list is reported and
     * returned.
     *
     * @param one  what one entry is called, e.g. {@code evaluator}
     * @param many what the count names, e.g. {@code entries} or {@code gates}
     */
    Optional<JsonNode> entries(JsonNode node, KeyPath at, String one, String many, int max) {
        if (node == null) {
            reader.problem(at, "is required: give at least one " + one);
            return Optional.empty();
        }
        if (!node.isArray()) {
            reader.problem(at, "must be a list, got " + ConfigReader.typeOf(node));
            return Optional.empty();
        }
        if (node.isEmpty()) {
            reader.problem(at, "is empty; give at least one " + one);
        }
        if (node.size() > max) {
            reader.problem(at, "has " + node.size() + " " + many + ", at most " + max + " are allowed");
            return Optional.empty();
        }
        return Optional.of(node);
    }

    /**
     * Checks an endpoint URL (an http agent's, a judge's; tools' when they come): it must parse, be http(s) with
     * a host, and carry no credentials ({@link EndpointUrls}, the check datagen's chat steps make). A refused URL
     * is never echoed, since it may hold a key.
     */
    void endpointUrl(String url, KeyPath at) {
        URI uri;
        try {
            uri = new URI(url);
        } catch (URISyntaxException e) {
            reader.problem(
                    at,
                    "is not a URL (" + e.getReason() + (e.getIndex() >= 0 ? " at index " + e.getIndex() : "")
                            + "); give the endpoint's http:// or https:// URL");
            return;
        }
        Optional<String> credentials = EndpointUrls.credentialsProblem(uri);
        if (credentials.isPresent()) {
            reader.problem(at, credentials.get());
        } else if (!"http".equals(uri.getScheme()) && !"https".equals(uri.getScheme()) || uri.getHost() == null) {
            reader.problem(at, "must be an http:// or https:// URL with a host, got \"" + url + "\"");
        }
    }

    /** An optional number in [min, max], NaN refused. */
    Optional<Double> number(JsonNode node, KeyPath at, double min, double max) {
        return reader.number(node, at, min, max);
    }
}
