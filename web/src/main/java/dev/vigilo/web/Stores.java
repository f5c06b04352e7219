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
    private final StorageConfig config;
    private final Map<StoreBinding, ObjectStore> open = new ConcurrentHashMap<>();

    Stores(StorageConfig config) {
        this.config = config;
    }

    /** @throws InvalidInputException when the storage configuration has no store with this binding */
    ObjectStore forBinding(StoreBinding binding) {
        return open.computeIfAbsent(binding, b -> {
            StoreSpec spec = config.resolve(b)
                    .orElseThrow(() -> new InvalidInputException("the storage configuration (" + config.source()
                            + ") has no store bound to " + b + "; start vigilo serve with a --storage-config that"
                            + " has it"));
            return ObjectStores.open(spec);
        });
    }

    StorageConfig config() {
        return config;
    }

    @Override
    public void close() {
        open.values().forEach(ObjectStore::close);
        open.clear();
    }
}
