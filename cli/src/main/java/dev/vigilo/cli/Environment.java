package dev.vigilo.cli;

import java.nio.file.Path;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * The process environment the CLI reads, injectable for tests. Resolves Vigilo home and the default locations
 * under it.
 *
 * @param variables environment variables
 * @param userHome  the user's home directory
 */
public record Environment(Map<String, String> variables, Path userHome) {
    public static final String HOME_VARIABLE = "VIGILO_HOME";
    public static final String CONTROL_DB_VARIABLE = "VIGILO_CONTROL_DB";
    public static final String STORAGE_CONFIG_VARIABLE = "VIGILO_STORAGE_CONFIG";
    public static final String EXECUTION_CONFIG_VARIABLE = "VIGILO_EXECUTION_CONFIG";

    public Environment {
        variables = Map.copyOf(variables);
        Objects.requireNonNull(userHome, "userHome");
    }

    public static Environment system() {
        return new Environment(System.getenv(), Path.of(System.getProperty("user.home")));
    }

    public Optional<String> get(String name) {
        return Optional.ofNullable(variables.get(name)).filter(v -> !v.isBlank());
    }

    /** {@code VIGILO_HOME}, default {@code ~/.vigilo}. */
    public Path vigiloHome() {
        return get(HOME_VARIABLE)
                .map(Path::of)
                .orElse(userHome.resolve(".vigilo"))
                .toAbsolutePath()
                .normalize();
    }

    /** Where the embedded PostgreSQL keeps its data and coordination files. */
    public Path embeddedPostgresDirectory() {
        return vigiloHome().resolve("postgres");
    }

    /** The default local object store. */
    public Path defaultObjectStore() {
        return vigiloHome().resolve("objects");
    }
}
