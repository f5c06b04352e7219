package dev.vigilo.exec;

/**
 * A service a worker depends on and waits for while it cannot be reached (docs/execution.md, "Outages"): the object
 * store holding a run's files, or a database (an execution database, or the control database). A wait for one of
 * them costs a chunk no attempt.
 */
public enum Service {
    /** The object store of a run's files (local directory or S3). */
    STORE("store"),
    /** An execution database, or the control database. */
    DATABASE("database");

    private final String wire;

    Service(String wire) {
        this.wire = wire;
    }

    /** The service's name in records and JSON: {@code store} or {@code database}. */
    public String wire() {
        return wire;
    }

    /** {@code the store} or {@code the database}, as messages say "waiting for the store". */
    public String described() {
        return "the " + wire;
    }

    /**
     * The service named {@code wire}.
     *
     * @throws IllegalArgumentException for any other name
     */
    public static Service ofWire(String wire) {
        for (Service s : values()) {
            if (s.wire.equals(wire)) {
                return s;
            }
        }
        throw new IllegalArgumentException("unknown service " + wire);
    }
}
