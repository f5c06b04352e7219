package dev.vigilo.exec;

import com.fasterxml.jackson.databind.JsonNode;
import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.common.input.InputFiles;
import dev.vigilo.config.ConfigDocument;
import dev.vigilo.config.ConfigReader;
import dev.vigilo.config.KeyPath;
import dev.vigilo.plan.PlanShape;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Pattern;

/**
 * Where execution records live: the execution databases ("placements") by alias (docs/formats/execution-config.md).
 * Without a file there is one placement, {@value #CONTROL}, in the control database's schema {@value #SCHEMA}.
 * New runs spread their shards over every configured placement, in alias order (shard {@code s} on alias
 * {@code s mod n}); that list is frozen into each run at preparation.
 *
 * @param source     where the configuration came from, for messages
 * @param placements by alias, sorted
 */
public record ExecutionConfig(String source, Map<String, Placement> placements) {
    /** The alias of the placement inside the control database. */
    public static final String CONTROL = "control";
    /** The schema execution records use in every execution database. */
    public static final String SCHEMA = "vigilo_exec";

    private static final Pattern ALIAS = Pattern.compile("[a-z][a-z0-9_-]{0,62}");
    private static final Pattern ENV_NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");
    private static final Set<String> KEYS = Set.of("jdbc_url", "password_env", "pool_size");

    public ExecutionConfig {
        Objects.requireNonNull(source, "source");
        placements = java.util.Collections.unmodifiableMap(new TreeMap<>(placements));
        if (placements.isEmpty()) {
            throw new IllegalArgumentException("at least one placement");
        }
    }

    /**
     * One execution database.
     *
     * @param alias       its name in run routes and messages
     * @param jdbcUrl     a {@code jdbc:postgresql:} URL without a password; empty for {@value #CONTROL}
     * @param passwordEnv the environment variable holding its password, if any
     * @param poolSize    connections this process may open to it
     */
    public record Placement(String alias, Optional<String> jdbcUrl, Optional<String> passwordEnv, int poolSize) {
        public Placement {
            Objects.requireNonNull(alias, "alias");
            Objects.requireNonNull(jdbcUrl, "jdbcUrl");
            Objects.requireNonNull(passwordEnv, "passwordEnv");
        }
    }

    /** Whether {@code text} is a valid alias: 1..63 of a-z, 0-9, '_' and '-', starting with a letter. */
    public static boolean isAlias(String text) {
        return text != null && ALIAS.matcher(text).matches();
    }

    /** The default: the control database only. */
    public static ExecutionConfig defaults() {
        return new ExecutionConfig(
                "built-in default (the control database)",
                Map.of(CONTROL, new Placement(CONTROL, Optional.empty(), Optional.empty(), 4)));
    }

    /** The aliases new runs spread their shards over, in order. */
    public List<String> aliases() {
        return List.copyOf(placements.keySet());
    }

    /** The frozen placement description recorded with a run: {@code round-robin:128:alias,alias,...}. */
    public String initialPlacement() {
        return PlanShape.placementRule(aliases());
    }

    /**
     * Reads an execution configuration file (TOML).
     *
     * @throws InvalidInputException naming the file and key of the first problem
     */
    public static ExecutionConfig parse(Path file) {
        Path abs = file.toAbsolutePath().normalize();
        // Checked before opening: a named pipe would block the open for ever.
        InputFiles.problem(abs).ifPresent(problem -> {
            throw new InvalidInputException("execution config " + abs + " " + problem
                    + "; point --execution-config (or VIGILO_EXECUTION_CONFIG) at an execution.toml file");
        });
        byte[] content;
        try {
            content = Files.readAllBytes(abs);
        } catch (NoSuchFileException e) {
            throw new InvalidInputException("execution config " + abs
                    + " does not exist; fix --execution-config / VIGILO_EXECUTION_CONFIG or create it");
        } catch (IOException e) {
            throw new InvalidInputException("execution config " + abs
                    + (Files.isDirectory(abs) ? " is a directory" : " cannot be read: " + e.getMessage())
                    + "; give the path of an execution.toml file (--execution-config / VIGILO_EXECUTION_CONFIG)");
        }
        ConfigDocument document = ConfigDocument.toml(content, "execution config " + abs);
        // The first problem ends the read: a configuration is used whole or not at all.
        ConfigReader reader =
                ConfigReader.firstProblem(document, problem -> new InvalidInputException(problem.toString()));
        JsonNode root = document.root();
        KeyPath top = KeyPath.root();
        if (root == null || !root.isObject()) {
            throw reader.failure(top, "expected [placements.ALIAS] tables");
        }
        for (var field : root.properties()) {
            if (!field.getKey().equals("placements") && !field.getKey().equals("version")) {
                throw reader.failure(top, "unknown key " + field.getKey() + "; allowed: version, placements");
            }
        }
        JsonNode version = root.get("version");
        if (version != null && !(version.isIntegralNumber() && version.asInt() == 1)) {
            throw reader.failure(top, "version must be 1 (a newer file needs a newer Vigilo)");
        }
        JsonNode placements = root.get("placements");
        if (placements == null || !placements.isObject() || placements.isEmpty()) {
            throw reader.failure(
                    top, "no placements; add a [placements.ALIAS] table (see docs/formats/execution-config.md)");
        }
        Map<String, Placement> out = new TreeMap<>();
        for (var entry : placements.properties()) {
            String alias = entry.getKey();
            KeyPath at = top.key("placements").key(alias);
            if (!ALIAS.matcher(alias).matches()) {
                throw reader.failure(at, "an alias is 1..63 of a-z, 0-9, '_' and '-', starting with a letter");
            }
            JsonNode t = entry.getValue();
            if (!t.isObject()) {
                throw reader.failure(at, "expected a table");
            }
            List<String> unknown = new ArrayList<>();
            t.fieldNames().forEachRemaining(k -> {
                if (!KEYS.contains(k)) {
                    unknown.add(k);
                }
            });
            if (!unknown.isEmpty()) {
                throw reader.failure(
                        at,
                        "unknown key " + unknown.get(0)
                                + (unknown.get(0).toLowerCase().contains("password")
                                        ? "; passwords never go in the file, name a variable with password_env"
                                        : "; allowed: jdbc_url, password_env, pool_size"));
            }
            Optional<String> url = text(reader, t, "jdbc_url", at);
            if (alias.equals(CONTROL)) {
                if (url.isPresent()) {
                    throw reader.failure(
                            at, "the alias \"control\" is the control database itself and takes no jdbc_url");
                }
            } else if (url.isEmpty()) {
                throw reader.failure(at.key("jdbc_url"), "required (jdbc:postgresql://host:port/database)");
            }
            if (url.isPresent()) {
                String u = url.get();
                if (!u.startsWith("jdbc:postgresql:")) {
                    throw reader.failure(at.key("jdbc_url"), "must start with jdbc:postgresql:");
                }
                if (u.toLowerCase().contains("password=") || u.matches("jdbc:postgresql://[^/?]*:[^/?]*@.*")) {
                    throw reader.failure(
                            at.key("jdbc_url"),
                            "contains a password; remove it and name the"
                                    + " environment variable holding it with password_env");
                }
            }
            Optional<String> env = text(reader, t, "password_env", at);
            if (env.isPresent() && !ENV_NAME.matcher(env.get()).matches()) {
                throw reader.failure(at.key("password_env"), "not an environment variable name");
            }
            int pool = 4;
            if (t.has("pool_size")) {
                JsonNode p = t.get("pool_size");
                if (!p.isIntegralNumber() || p.asInt() < 1 || p.asInt() > 64) {
                    throw reader.failure(at.key("pool_size"), "an integer in 1..64");
                }
                pool = p.asInt();
            }
            out.put(alias, new Placement(alias, url, env, pool));
        }
        return new ExecutionConfig(abs.toString(), out);
    }

    private static Optional<String> text(ConfigReader reader, JsonNode t, String key, KeyPath at) {
        JsonNode v = t.get(key);
        if (v == null) {
            return Optional.empty();
        }
        if (!v.isTextual() || v.asText().isBlank()) {
            throw reader.failure(at.key(key), "expected a non-empty string");
        }
        return Optional.of(v.asText());
    }
}
