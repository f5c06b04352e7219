package dev.vigilo.storage;

import com.fasterxml.jackson.databind.JsonNode;
import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.common.input.InputFiles;
import dev.vigilo.config.ConfigDocument;
import dev.vigilo.config.ConfigReader;
import dev.vigilo.config.KeyPath;
import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Turns one {@code storage.toml} file into a {@link StorageConfig}, or a {@link InvalidInputException} whose
 * message names the file and the key path of the first problem ({@code stores.shared.bucket: ...}).
 */
final class StorageConfigParser {
    private static final String KIND_LOCAL = "local";
    private static final String KIND_S3 = "s3";
    private static final List<String> TOP_KEYS = List.of("default", "stores");
    private static final List<String> LOCAL_KEYS = List.of("kind", "root");
    private static final List<String> S3_KEYS = List.of("kind", "endpoint", "region", "bucket", "prefix", "path_style");
    /** Keys people put in configs to carry secrets; rejected with a pointer to where credentials belong. */
    private static final Set<String> CREDENTIAL_KEYS = Set.of(
            "access_key",
            "secret_key",
            "access_key_id",
            "secret_access_key",
            "aws_access_key_id",
            "aws_secret_access_key",
            "session_token",
            "aws_session_token",
            "credentials",
            "password",
            "secret",
            "token");
    /** Store names appear on command lines and in logs; keep them to TOML's bare-key characters. */
    private static final Pattern STORE_NAME = Pattern.compile("[A-Za-z0-9_-]+");

    private static final KeyPath STORES = KeyPath.root().key("stores");
    private static final KeyPath DEFAULT = KeyPath.root().key("default");

    private final Path file;
    /** Stops at the first problem: a storage configuration is used whole or not at all. */
    private ConfigReader reader;

    private StorageConfigParser(Path file) {
        this.file = file.toAbsolutePath().normalize();
    }

    static StorageConfig parse(Path file) {
        return new StorageConfigParser(file).parse();
    }

    private StorageConfig parse() {
        ConfigDocument document = readToml();
        reader = ConfigReader.firstProblem(document, problem -> new InvalidInputException(problem.toString()));
        JsonNode root = document.root();
        checkKeys(root, KeyPath.root(), TOP_KEYS);
        Map<String, StoreSpec> stores = stores(root.get("stores"));
        String defaultName = defaultName(root.get("default"), stores);
        return new StorageConfig(file.toString(), stores, defaultName);
    }

    private ConfigDocument readToml() {
        // Checked before opening: a named pipe would block the open for ever.
        InputFiles.problem(file).ifPresent(problem -> {
            throw new InvalidInputException(
                    "storage config " + file + " " + problem + "; give the path of a storage.toml file");
        });
        byte[] content;
        try {
            content = Files.readAllBytes(file);
        } catch (NoSuchFileException e) {
            throw new InvalidInputException("storage config " + file + " does not exist", e);
        } catch (IOException e) {
            throw new InvalidInputException(
                    "storage config " + file
                            + (Files.isDirectory(file) ? " is a directory" : " cannot be read: " + e.getMessage())
                            + "; give the path of a storage.toml file",
                    e);
        }
        return ConfigDocument.toml(content, "storage config " + file);
    }

    private Map<String, StoreSpec> stores(JsonNode stores) {
        if (stores != null && !stores.isObject()) {
            throw error(STORES, "expected a table of stores, got " + typeOf(stores));
        }
        if (stores == null || stores.isEmpty()) {
            throw error(
                    STORES,
                    "no stores configured; add a [stores.NAME] table with kind = \"local\" or" + " kind = \"s3\"");
        }
        Map<String, StoreSpec> specs = new LinkedHashMap<>();
        for (Map.Entry<String, JsonNode> entry : stores.properties()) {
            String name = entry.getKey();
            KeyPath path = STORES.key(name);
            if (CREDENTIAL_KEYS.contains(name.toLowerCase(Locale.ROOT))) {
                throw credentials(path);
            }
            if (!STORE_NAME.matcher(name).matches()) {
                throw error(path, "store names use only letters, digits, '_' and '-'");
            }
            if (!entry.getValue().isObject()) {
                throw error(path, "expected a table, got " + typeOf(entry.getValue()));
            }
            specs.put(name, store(name, path, entry.getValue()));
        }
        return specs;
    }

    private StoreSpec store(String name, KeyPath path, JsonNode table) {
        checkCredentials(table, path);
        JsonNode kind = table.get("kind");
        if (kind == null) {
            throw error(path, "missing \"kind\" (expected \"local\" or \"s3\")");
        }
        String kindText = string(kind, path.key("kind"));
        switch (kindText) {
            case KIND_LOCAL:
                checkKeys(table, path, LOCAL_KEYS);
                return new StoreSpec.Local(name, localRoot(requiredString(table, path, "root"), path.key("root")));
            case KIND_S3:
                checkKeys(table, path, S3_KEYS);
                return s3(name, path, table);
            default:
                throw error(path.key("kind"), "unknown kind \"" + kindText + "\" (expected \"local\" or \"s3\")");
        }
    }

    private StoreSpec.S3 s3(String name, KeyPath path, JsonNode table) {
        Optional<URI> endpoint =
                optionalString(table, path, "endpoint").map(text -> endpoint(text, path.key("endpoint")));
        String region = requiredString(table, path, "region");
        String bucket = requiredString(table, path, "bucket");
        if (bucket.contains("/")) {
            throw error(path.key("bucket"), "a bucket name cannot contain '/' (put key prefixes in \"prefix\")");
        }
        // Leading and trailing slashes are a common way of writing a "directory"; they add nothing to keys.
        String prefix = optionalString(table, path, "prefix").orElse("").replaceAll("^/+|/+$", "");
        boolean pathStyle = false;
        JsonNode style = table.get("path_style");
        if (style != null) {
            if (!style.isBoolean()) {
                throw error(path.key("path_style"), "expected true or false, got " + typeOf(style));
            }
            pathStyle = style.booleanValue();
        }
        return new StoreSpec.S3(name, endpoint, region, bucket, prefix, pathStyle);
    }

    private Path localRoot(String text, KeyPath path) {
        Path root;
        try {
            root = Path.of(text);
        } catch (InvalidPathException e) {
            throw error(path, "not a valid path: " + e.getMessage());
        }
        Path resolved = root.isAbsolute()
                ? root.normalize()
                : file.getParent().resolve(root).normalize();
        InputFiles.directoryProblem(resolved).ifPresent(problem -> {
            throw error(path, resolved + " " + problem + "; point it at a directory (created on first write)");
        });
        return resolved;
    }

    /**
     * Parses an endpoint and normalizes it (lower-case scheme and host, no trailing {@code /}) so that equal
     * endpoints produce equal {@link StoreBinding}s.
     */
    private URI endpoint(String text, KeyPath path) {
        URI uri;
        try {
            uri = new URI(text);
        } catch (URISyntaxException e) {
            throw error(path, "not a valid URI: " + e.getMessage());
        }
        String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
        if (!scheme.equals("http") && !scheme.equals("https") || uri.getHost() == null) {
            throw error(path, "expected http://HOST[:PORT] or https://HOST[:PORT], got \"" + text + "\"");
        }
        if (uri.getRawUserInfo() != null) {
            throw credentials(path);
        }
        if (uri.getRawQuery() != null || uri.getRawFragment() != null) {
            throw error(path, "an endpoint has no query or fragment, got \"" + text + "\"");
        }
        String endpointPath = uri.getPath() == null ? "" : uri.getPath().replaceAll("/+$", "");
        try {
            return new URI(
                    scheme,
                    null,
                    uri.getHost().toLowerCase(Locale.ROOT),
                    uri.getPort(),
                    endpointPath.isEmpty() ? null : endpointPath,
                    null,
                    null);
        } catch (URISyntaxException e) {
            throw error(path, "not a valid URI: " + e.getMessage());
        }
    }

    private String defaultName(JsonNode node, Map<String, StoreSpec> stores) {
        if (node == null) {
            if (stores.size() == 1) {
                return stores.keySet().iterator().next();
            }
            throw error(
                    DEFAULT,
                    "missing; with " + stores.size() + " stores (" + String.join(", ", stores.keySet())
                            + ") set default = \"NAME\" to choose one");
        }
        String name = string(node, DEFAULT);
        if (!stores.containsKey(name)) {
            throw error(
                    DEFAULT,
                    "no store named \"" + name + "\" (configured: " + String.join(", ", stores.keySet()) + ")");
        }
        return name;
    }

    /** Rejects keys outside {@code allowed}, pointing credentials to where they belong. */
    private void checkKeys(JsonNode table, KeyPath path, List<String> allowed) {
        checkCredentials(table, path);
        for (Map.Entry<String, JsonNode> entry : table.properties()) {
            String key = entry.getKey();
            if (!allowed.contains(key)) {
                throw error(path.key(key), "unknown key (expected one of " + String.join(", ", allowed) + ")");
            }
        }
    }

    private void checkCredentials(JsonNode table, KeyPath path) {
        for (Map.Entry<String, JsonNode> entry : table.properties()) {
            String key = entry.getKey();
            if (CREDENTIAL_KEYS.contains(key.toLowerCase(Locale.ROOT))) {
                throw credentials(path.key(key));
            }
        }
    }

    private String requiredString(JsonNode table, KeyPath path, String key) {
        return optionalString(table, path, key).orElseThrow(() -> error(path, "missing \"" + key + "\""));
    }

    private Optional<String> optionalString(JsonNode table, KeyPath path, String key) {
        JsonNode node = table.get(key);
        if (node == null) {
            return Optional.empty();
        }
        String text = string(node, path.key(key));
        if (text.isBlank()) {
            throw error(path.key(key), "must not be empty");
        }
        return Optional.of(text);
    }

    private String string(JsonNode node, KeyPath path) {
        if (!node.isTextual()) {
            throw error(path, "expected a string, got " + typeOf(node));
        }
        return node.textValue();
    }

    private RuntimeException credentials(KeyPath path) {
        return error(
                path,
                "credentials do not belong in the storage config; S3 credentials come from the AWS"
                        + " SDK default provider chain (environment AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY,"
                        + " ~/.aws/credentials, or an instance or container role)");
    }

    /** {@code storage config FILE: key.path: message} (TOML trees carry no positions). */
    private RuntimeException error(KeyPath path, String message) {
        return reader.failure(path, message);
    }

    private static String typeOf(JsonNode node) {
        if (node.isObject()) {
            return "a table";
        }
        if (node.isArray()) {
            return "an array";
        }
        if (node.isBoolean()) {
            return "a boolean";
        }
        if (node.isNumber()) {
            return "a number";
        }
        return node.isTextual() ? "a string" : node.getNodeType().name().toLowerCase(Locale.ROOT);
    }
}
