package dev.vigilo.cli;

import dev.vigilo.common.concurrent.Futures;
import dev.vigilo.common.concurrent.Threads;
import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.common.errors.UnavailableException;
import dev.vigilo.control.ControlDatabase;
import dev.vigilo.control.ControlSettings;
import dev.vigilo.exec.ExecutionConfig;
import dev.vigilo.exec.Placements;
import dev.vigilo.storage.ObjectStore;
import dev.vigilo.storage.ObjectStores;
import dev.vigilo.storage.StorageConfig;
import dev.vigilo.storage.StoreBinding;
import dev.vigilo.storage.StoreSpec;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import org.slf4j.LoggerFactory;

/**
 * Opens, lazily, what a command needs (the control database, the storage configuration, object stores) from the
 * command line and the environment, and closes all of it when the command ends. Commands that need neither
 * (help, version) start nothing. The configuration files named by option or environment variable are the
 * exception: they are read when this is made, so every command refuses a bad one the same way.
 */
final class Connections implements AutoCloseable {
    private final Environment environment;
    private final Optional<String> controlDbOption;
    private final Optional<Path> storageConfigOption;
    private final Optional<Path> executionConfigOption;
    private ControlDatabase controlDatabase;
    /** The control database being opened on a thread of its own ({@link #openControlInBackground}), until taken. */
    private CompletableFuture<ControlDatabase> openingControl;
    /** The execution databases being opened after it ({@link #openAllInBackground}), until taken. */
    private CompletableFuture<Placements> openingPlacements;

    private StorageConfig storageConfig;
    private ExecutionConfig executionConfig;
    private Placements placements;
    private final List<ObjectStore> openStores = new ArrayList<>();

    Connections(
            Environment environment,
            Optional<String> controlDbOption,
            Optional<Path> storageConfigOption,
            Optional<Path> executionConfigOption) {
        this.environment = Objects.requireNonNull(environment, "environment");
        this.controlDbOption = Objects.requireNonNull(controlDbOption, "controlDbOption");
        this.storageConfigOption = Objects.requireNonNull(storageConfigOption, "storageConfigOption");
        this.executionConfigOption = Objects.requireNonNull(executionConfigOption, "executionConfigOption");
        // A configuration file that is named is read now, whatever the command needs: a missing, unreadable or
        // invalid one is refused alike by every command, rather than ignored by those that happen not to use it
        // (dataset list needs no store, yet --storage-config must still name a storage.toml).
        if (storageConfigFile().isPresent()) {
            storage();
        }
        if (executionConfigFile().isPresent()) {
            execution();
        }
    }

    /** {@code --storage-config}, else {@code VIGILO_STORAGE_CONFIG}, if either names a file. */
    private Optional<Path> storageConfigFile() {
        return storageConfigOption.or(
                () -> environment.get(Environment.STORAGE_CONFIG_VARIABLE).map(Path::of));
    }

    /** {@code --execution-config}, else {@code VIGILO_EXECUTION_CONFIG}, if either names a file. */
    private Optional<Path> executionConfigFile() {
        return executionConfigOption.or(
                () -> environment.get(Environment.EXECUTION_CONFIG_VARIABLE).map(Path::of));
    }

    /** {@code --execution-config}, else {@code VIGILO_EXECUTION_CONFIG}, else the control database only. */
    ExecutionConfig execution() {
        if (executionConfig == null) {
            executionConfig = executionConfigFile().map(ExecutionConfig::parse).orElseGet(ExecutionConfig::defaults);
        }
        return executionConfig;
    }

    /** The execution databases of {@link #execution()}, opened, migrated and registered. */
    Placements placements() {
        if (placements == null) {
            if (openingPlacements != null) {
                // On failure (or an interrupt) the opening stays here, for close() to wait for and close.
                placements = Futures.join(openingPlacements, "interrupted while the execution databases were opening");
                openingPlacements = null;
            } else {
                placements = Placements.open(control(), execution());
            }
        }
        return placements;
    }

    /**
     * The execution databases of {@link #execution()} this process reaches now, and why each other one cannot be
     * reached (alias to message), for commands that do what they can and report the rest ({@code run cancel},
     * {@code placement list}). Every configured database is probed on its own; the reachable ones are then opened
     * together and stay open as {@link #placements()}.
     */
    Reachable reachablePlacements() {
        if (placements != null) {
            return new Reachable(placements, Map.of());
        }
        ControlDatabase db = control(); // an unreachable control database is reported as itself
        try {
            return new Reachable(placements(), Map.of());
        } catch (UnavailableException e) {
            // At least one is unreachable: find out which, and open the others.
        }
        ExecutionConfig config = execution();
        Map<String, ExecutionConfig.Placement> reachable = new TreeMap<>();
        Map<String, String> unreachable = new TreeMap<>();
        for (ExecutionConfig.Placement p : config.placements().values()) {
            try (Placements one = Placements.open(db, new ExecutionConfig(config.source(), Map.of(p.alias(), p)))) {
                reachable.put(p.alias(), p);
            } catch (UnavailableException e) {
                unreachable.put(p.alias(), e.getMessage());
            }
        }
        if (!reachable.isEmpty()) {
            placements = Placements.open(db, new ExecutionConfig(config.source(), reachable));
        }
        return new Reachable(Optional.ofNullable(placements), unreachable);
    }

    /**
     * @param placements  the reachable execution databases, opened (empty when none is)
     * @param unreachable the others: alias to why
     */
    record Reachable(Optional<Placements> placements, Map<String, String> unreachable) {
        Reachable(Placements placements, Map<String, String> unreachable) {
            this(Optional.of(placements), unreachable);
        }
    }

    /**
     * {@code --control-db}, else {@code VIGILO_CONTROL_DB}, else the embedded server under Vigilo home. After {@link
     * #openControlInBackground}, waits for that opening and fails as it failed.
     */
    ControlDatabase control() {
        if (controlDatabase == null) {
            if (openingControl != null) {
                // On failure (or an interrupt) the opening stays here, for close() to wait for and close.
                controlDatabase = Futures.join(openingControl, "interrupted while the control database was opening");
                openingControl = null;
            } else {
                StartupWarmup.start(Set.of(StartupWarmup.Item.JDBI_STATEMENT_EVENTS));
                controlDatabase = openControl();
            }
        }
        return controlDatabase;
    }

    /**
     * Starts opening the control database on a thread of its own (joining or starting the embedded server, connecting,
     * checking the schema: a second or more), so that the calling thread can do work that does not need it meanwhile
     * (read and store a dataset's cases); {@link #control()} then waits for it. Only the opening runs on that thread:
     * this object stays confined to its caller's thread. Does nothing when the database is open or opening.
     */
    void openControlInBackground() {
        openInBackground(false);
    }

    /**
     * As {@link #openControlInBackground}, and then, on the same thread, the execution databases of {@link
     * #execution()} (connected, their schema checked): {@link #placements()} waits for them. For a command that will
     * need both ({@code eval}).
     */
    void openAllInBackground() {
        openInBackground(true);
    }

    private void openInBackground(boolean placementsToo) {
        if (controlDatabase != null || openingControl != null) {
            return;
        }
        // Read on this thread: the configuration stays this object's, confined to its caller.
        ExecutionConfig config = placementsToo ? execution() : null;
        // Logging starts here, before a second thread can log: SLF4J initialized by two threads at once parks the
        // calls of one and then warns on stderr that it replayed them.
        LoggerFactory.getILoggerFactory();
        CompletableFuture<ControlDatabase> control = new CompletableFuture<>();
        CompletableFuture<Placements> all = placementsToo && placements == null ? new CompletableFuture<>() : null;
        openingControl = control;
        openingPlacements = all;
        StartupWarmup.start(Set.of(StartupWarmup.Item.JDBI_STATEMENT_EVENTS));
        Threads.startDaemon("databases-open", () -> {
            ControlDatabase db;
            try {
                db = openControl();
            } catch (Throwable t) {
                control.completeExceptionally(t);
                if (all != null) {
                    all.completeExceptionally(t);
                }
                return;
            }
            control.complete(db);
            if (all != null) {
                try {
                    all.complete(Placements.open(db, config));
                } catch (Throwable t) {
                    all.completeExceptionally(t);
                }
            }
        });
    }

    private ControlDatabase openControl() {
        Optional<String> url = controlDbOption.or(() -> environment.get(Environment.CONTROL_DB_VARIABLE));
        ControlSettings settings = url.<ControlSettings>map(ControlSettings.Jdbc::new)
                .orElseGet(() -> new ControlSettings.Embedded(environment.embeddedPostgresDirectory()));
        return ControlDatabase.open(settings);
    }

    /** {@code --storage-config}, else {@code VIGILO_STORAGE_CONFIG}, else a local store under Vigilo home. */
    StorageConfig storage() {
        if (storageConfig == null) {
            storageConfig = storageConfigFile()
                    .map(StorageConfig::load)
                    .orElseGet(() -> StorageConfig.localDefault(environment.defaultObjectStore()));
        }
        return storageConfig;
    }

    /** Opens the named store, or the configuration's default. */
    ObjectStore openStore(Optional<String> name) {
        StorageConfig config = storage();
        StoreSpec spec = name.map(n -> config.store(n)
                        .orElseThrow(() -> new InvalidInputException(
                                "storage config " + config.source() + " has no store named \"" + n + "\"")))
                .orElseGet(config::defaultStore);
        return track(ObjectStores.open(spec));
    }

    /** Opens the configured store bound to {@code binding}, or explains that none is. */
    ObjectStore openStore(StoreBinding binding) {
        StorageConfig config = storage();
        StoreSpec spec = config.resolve(binding)
                .orElseThrow(() -> new InvalidInputException(
                        "storage config " + config.source() + " has no store bound to " + binding
                                + "; pass --storage-config (or set " + Environment.STORAGE_CONFIG_VARIABLE
                                + ") with a store whose location is " + binding));
        return track(ObjectStores.open(spec));
    }

    private ObjectStore track(ObjectStore store) {
        openStores.add(store);
        return store;
    }

    @Override
    public void close() {
        for (ObjectStore store : openStores) {
            store.close();
        }
        openStores.clear();
        if (openingPlacements != null) {
            // Opened for a command that ended before it needed them: wait, so that nothing opened stays open.
            Placements opened = openingPlacements.handle((p, failure) -> p).join();
            openingPlacements = null;
            if (opened != null) {
                opened.close();
            }
        }
        if (placements != null) {
            placements.close();
            placements = null;
        }
        if (openingControl != null) {
            // Opened for a command that ended before it needed the database: wait, so that nothing opened stays open.
            ControlDatabase opened = openingControl.handle((db, failure) -> db).join();
            openingControl = null;
            if (opened != null) {
                opened.close();
            }
        }
        if (controlDatabase != null) {
            controlDatabase.close();
            controlDatabase = null;
        }
    }
}
