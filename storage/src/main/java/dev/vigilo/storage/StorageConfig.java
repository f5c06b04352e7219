package dev.vigilo.storage;

import dev.vigilo.common.errors.InvalidInputException;
import java.nio.file.Path;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * The object stores a Vigilo installation may use, by name, and which one is the default. Immutable.
 *
 * <p>Loaded from a {@code storage.toml} file:
 * <pre>{@code
 * default = "shared"              # optional when exactly one store is configured
 *
 * [stores.disk]
 * kind = "local"
 * root = "/var/lib/vigilo/objects" # relative paths resolve against the file's directory
 *
 * [stores.shared]
 * kind = "s3"
 * endpoint = "http://127.0.0.1:9000" # optional; absent means AWS
 * region = "us-east-1"
 * bucket = "vigilo-data"
 * prefix = "team-a"                   # optional, default ""
 * path_style = true                   # optional, default false
 * }</pre>
 * Unknown keys, missing required keys, unknown kinds and credentials are errors: S3 credentials come only from the
 * AWS SDK's default provider chain, so a configuration can be shared and recorded without leaking secrets.
 */
public final class StorageConfig {
    private final String source;
    private final Map<String, StoreSpec> stores;
    private final StoreSpec defaultStore;

    StorageConfig(String source, Map<String, StoreSpec> stores, String defaultName) {
        this.source = Objects.requireNonNull(source, "source");
        this.stores = Collections.unmodifiableMap(new LinkedHashMap<>(stores));
        this.defaultStore = Objects.requireNonNull(this.stores.get(defaultName), "default store");
    }

    /**
     * Reads and validates a {@code storage.toml} file.
     *
     * @throws InvalidInputException naming the file and the offending entry when the file is missing,
     *                                unreadable, not TOML (with line and column) or not a valid configuration
     */
    public static StorageConfig load(Path file) {
        Objects.requireNonNull(file, "file");
        return StorageConfigParser.parse(file);
    }

    /** A configuration of one local store named {@code local} at {@code root}, which is the default. */
    public static StorageConfig localDefault(Path root) {
        Objects.requireNonNull(root, "root");
        StoreSpec.Local local = new StoreSpec.Local("local", root);
        return new StorageConfig("built-in default (" + local.root() + ")", Map.of(local.name(), local), local.name());
    }

    /** The store used when no name is given. */
    public StoreSpec defaultStore() {
        return defaultStore;
    }

    /** The store configured under {@code name}, if any. */
    public Optional<StoreSpec> store(String name) {
        Objects.requireNonNull(name, "name");
        return Optional.ofNullable(stores.get(name));
    }

    /** Every configured store, in the order the configuration lists them. */
    public List<StoreSpec> stores() {
        return List.copyOf(stores.values());
    }

    /**
     * The configured store holding the objects {@code binding} names (the first one when several names share
     * it), for example to open the store a dataset recorded.
     */
    public Optional<StoreSpec> resolve(StoreBinding binding) {
        Objects.requireNonNull(binding, "binding");
        return stores.values().stream()
                .filter(spec -> spec.binding().equals(binding))
                .findFirst();
    }

    /** Where this configuration came from: the file's path, or {@code built-in default (<root>)}. */
    public String source() {
        return source;
    }

    @Override
    public String toString() {
        return "StorageConfig[" + source + ", stores=" + stores.keySet() + ", default=" + defaultStore.name() + "]";
    }
}
