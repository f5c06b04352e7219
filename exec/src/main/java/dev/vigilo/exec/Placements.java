package dev.vigilo.exec;

import dev.vigilo.common.errors.ConflictException;
import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.common.errors.SecretValues;
import dev.vigilo.common.errors.UnavailableException;
import dev.vigilo.control.ControlDatabase;
import dev.vigilo.control.SchemaDatabase;
import dev.vigilo.plan.PlanShape;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import org.jdbi.v3.core.Jdbi;

/**
 * The execution databases this process can reach, by alias, opened and migrated, and registered in the control
 * database ({@code exec_placements}) with their identity. A placement's serviceability (active or draining) is not
 * cached: {@link #state} reads it on every call, so each bounded operation sees the current value.
 *
 * <p>Thread-safe. {@link #close()} closes every execution database pool (not the control database).
 */
public final class Placements implements AutoCloseable {
    /** Serviceability of a placement. */
    public enum State {
        /** Takes new admissions and claims. */
        ACTIVE("active"),
        /** Replays metadata already admitted and finishes claimed work; takes no new admission. */
        DRAINING("draining");

        private final String sql;

        State(String sql) {
            this.sql = sql;
        }

        public String sql() {
            return sql;
        }

        static State ofSql(String s) {
            for (State st : values()) {
                if (st.sql.equals(s)) {
                    return st;
                }
            }
            throw new IllegalStateException("unknown placement state " + s);
        }
    }

    private final Jdbi control;
    private final ExecutionConfig config;
    private final Map<String, SchemaDatabase> databases;
    private final SecretValues credentials;

    private Placements(
            Jdbi control, ExecutionConfig config, Map<String, SchemaDatabase> databases, SecretValues credentials) {
        this.control = control;
        this.config = config;
        this.databases = databases;
        this.credentials = credentials;
    }

    /**
     * The credentials these databases were opened with: the control database's URL password and the value of every
     * placement's {@code password_env}. Agents and evaluators inherit the worker's environment, which holds them, so
     * the worker masks them in everything it records as it masks a run's own secrets.
     */
    public SecretValues credentials() {
        return credentials;
    }

    /**
     * Opens (and migrates) every configured execution database and registers each alias with the database's
     * identity. An alias already registered with another identity is refused.
     *
     * @throws InvalidInputException when a password variable is unset
     * @throws ConflictException     when an alias now points at another database than the one it was registered with
     */
    public static Placements open(ControlDatabase controlDb, ExecutionConfig config) {
        Objects.requireNonNull(controlDb, "controlDb");
        Objects.requireNonNull(config, "config");
        Map<String, SchemaDatabase> opened = new LinkedHashMap<>();
        try {
            for (ExecutionConfig.Placement p : config.placements().values()) {
                opened.put(p.alias(), openOne(controlDb, config, p));
            }
            SecretValues credentials = controlDb.credentials();
            for (ExecutionConfig.Placement p : config.placements().values()) {
                String password = p.passwordEnv().map(System::getenv).orElse(null);
                if (password != null && !password.isEmpty()) {
                    credentials = credentials.and(password);
                }
            }
            Placements placements = new Placements(controlDb.jdbi(), config, opened, credentials);
            for (var e : opened.entrySet()) {
                placements.register(e.getKey(), e.getValue());
            }
            return placements;
        } catch (RuntimeException e) {
            opened.values().forEach(SchemaDatabase::close);
            throw e;
        }
    }

    private static SchemaDatabase openOne(
            ControlDatabase controlDb, ExecutionConfig config, ExecutionConfig.Placement p) {
        String name = "execution database \"" + p.alias() + "\"";
        if (p.jdbcUrl().isEmpty()) {
            return controlDb.openSchema(name, ExecutionConfig.SCHEMA, MIGRATIONS, p.poolSize());
        }
        String password = null;
        if (p.passwordEnv().isPresent()) {
            password = System.getenv(p.passwordEnv().get());
            if (password == null) {
                throw new InvalidInputException("execution config " + config.source() + ": placements." + p.alias()
                        + ".password_env names " + p.passwordEnv().get() + ", which is not set; export it");
            }
        }
        return SchemaDatabase.open(name, p.jdbcUrl().get(), password, ExecutionConfig.SCHEMA, MIGRATIONS, p.poolSize());
    }

    static final String MIGRATIONS = "classpath:db/execution";

    private void register(String alias, SchemaDatabase db) {
        String binding = db.jdbi()
                        .withHandle(h -> h.createQuery("SELECT database_id FROM exec_identity")
                                .mapTo(String.class)
                                .one())
                + "/" + ExecutionConfig.SCHEMA;
        String recorded = control.inTransaction(h -> {
            h.createUpdate("INSERT INTO exec_placements (alias, state, binding) VALUES (:a, 'active', :b)"
                            + " ON CONFLICT (alias) DO NOTHING")
                    .bind("a", alias)
                    .bind("b", binding)
                    .execute();
            return h.createQuery("SELECT binding FROM exec_placements WHERE alias = :a")
                    .bind("a", alias)
                    .mapTo(String.class)
                    .one();
        });
        if (!recorded.equals(binding)) {
            throw new ConflictException("execution database \"" + alias + "\" (" + db.description()
                    + ") is not the database this alias was registered with (identity " + recorded + ", now "
                    + binding + "); point the alias back at it in " + config.source() + ", or use a new alias");
        }
    }

    /** The configuration these placements came from. */
    public ExecutionConfig config() {
        return config;
    }

    /** The control database's Jdbi. */
    public Jdbi control() {
        return control;
    }

    /** Aliases this process reaches, sorted. */
    public Set<String> aliases() {
        return databases.keySet();
    }

    /** Whether this process reaches {@code alias}. */
    public boolean has(String alias) {
        return databases.containsKey(alias);
    }

    /**
     * The execution database of {@code alias}.
     *
     * @throws UnavailableException when this process's execution configuration does not list it
     */
    public Jdbi jdbi(String alias) {
        SchemaDatabase db = databases.get(alias);
        if (db == null) {
            throw new UnavailableException("execution database \"" + alias + "\" is not in this process's execution"
                    + " configuration (" + config.source() + "); add it (see docs/formats/execution-config.md)");
        }
        return db.jdbi();
    }

    /** The current serviceability of {@code alias}, read from the control database now. */
    public State state(String alias) {
        Optional<String> s = control.withHandle(h -> h.createQuery("SELECT state FROM exec_placements WHERE alias = :a")
                .bind("a", alias)
                .mapTo(String.class)
                .findOne());
        return s.map(State::ofSql)
                .orElseThrow(() -> new UnavailableException("execution database \"" + alias
                        + "\" is not registered in the control database; start a process whose execution"
                        + " configuration lists it"));
    }

    /** Sets the serviceability of {@code alias} ({@code vigilo placement drain|activate}). */
    public void setState(String alias, State state) {
        setState(control, alias, state);
    }

    /**
     * Sets the serviceability of a registered {@code alias} in the control database, without opening any execution
     * database (so an unreachable one can be drained).
     *
     * @throws InvalidInputException when no execution database is registered under {@code alias}
     */
    public static void setState(ControlDatabase controlDb, String alias, State state) {
        setState(Objects.requireNonNull(controlDb, "controlDb").jdbi(), alias, state);
    }

    private static void setState(Jdbi control, String alias, State state) {
        Objects.requireNonNull(alias, "alias");
        Objects.requireNonNull(state, "state");
        int n = control.withHandle(h -> h.createUpdate("UPDATE exec_placements SET state = :s WHERE alias = :a")
                .bind("s", state.sql())
                .bind("a", alias)
                .execute());
        if (n == 0) {
            List<String> known =
                    registered(control).stream().map(Registered::alias).toList();
            throw new InvalidInputException("no execution database \"" + alias + "\" is registered; "
                    + (known.isEmpty()
                            ? "none is yet (a command that opens the execution configuration registers it)"
                            : "registered: " + String.join(", ", known)));
        }
    }

    /**
     * A placement registered in the control database.
     *
     * @param alias its alias
     * @param state its serviceability now
     */
    public record Registered(String alias, State state) {
        public Registered {
            Objects.requireNonNull(alias, "alias");
            Objects.requireNonNull(state, "state");
        }
    }

    /**
     * Every placement registered in the control database ({@code exec_placements}), sorted by alias, whether or not
     * this process's execution configuration lists it. Reads the control database only.
     */
    public static List<Registered> registered(ControlDatabase controlDb) {
        return registered(Objects.requireNonNull(controlDb, "controlDb").jdbi());
    }

    private static List<Registered> registered(Jdbi control) {
        return control.withHandle(h -> h.createQuery(
                        "SELECT alias, state FROM exec_placements ORDER BY alias COLLATE \"C\"")
                .map((rs, ctx) -> new Registered(rs.getString("alias"), State.ofSql(rs.getString("state"))))
                .list());
    }

    /** The aliases of a frozen placement rule ({@code round-robin:128:a,b}), in order. */
    public static List<String> aliasesOf(String initialPlacement) {
        Optional<List<String>> aliases = PlanShape.placementAliases(initialPlacement);
        if (aliases.isEmpty()) {
            // Runs prepared before placements existed: everything in the control database.
            return List.of(ExecutionConfig.CONTROL);
        }
        List<String> out = new ArrayList<>(aliases.get());
        out.removeIf(String::isEmpty);
        return out.isEmpty() ? List.of(ExecutionConfig.CONTROL) : out;
    }

    @Override
    public void close() {
        databases.values().forEach(SchemaDatabase::close);
    }
}
