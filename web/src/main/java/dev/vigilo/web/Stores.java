package dev.vigilo.web;

import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.storage.ObjectStore;
import dev.vigilo.storage.ObjectStores;
import dev.vigilo.storage.StorageConfig;
import dev.vigilo.storage.StoreBinding;
import dev.vigilo.storage.StoreSpec;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/** The object stores the dashboard reads, opened once per physical binding and closed with the dashboard. */
final class Stores implements AutoCloseable {
    private final java.util.Optional<StorageConfig> config;
    private final Map<StoreBinding, ObjectStore> open = new ConcurrentHashMap<>();

    Stores(java.util.Optional<StorageConfig> config) {
        this.config = config;
    }

    /** @throws InvalidInputException when the storage configuration has no store with this binding */
    ObjectStore forBinding(StoreBinding binding) {
        return open.computeIfAbsent(binding, b -> {
            StorageConfig c =
                    config.orElseThrow(() -> new InvalidInputException("this dashboard has no storage configuration"));
            StoreSpec spec = c.resolve(b)
                    .orElseThrow(() -> new InvalidInputException("the storage configuration (" + c.source()
                            + ") has no store bound to " + b + "; start vigilo serve with a --storage-config that"
                            + " has it"));
            return ObjectStores.open(spec);
        });
    }

    @Override
    public void close() {
        open.values().forEach(ObjectStore::close);
        open.clear();
    }
}
