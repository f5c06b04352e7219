package dev.vigilo.agent.sandbox;

import java.util.Optional;

/** Where the commands of a case run (the profile's {@code sandbox.kind}). */
public enum SandboxKind {
    /** On the worker's host, as the worker's user, in the worker's working directory (the default). */
    NONE("none", Optional.empty()),
    /** In a bubblewrap sandbox ({@code bwrap}): read-only system directories, private work directory and /tmp. */
    BWRAP("bwrap", Optional.of("bwrap")),
    /** In a podman container of the profile's {@code image}. */
    PODMAN("podman", Optional.of("podman"));

    private final String wire;
    private final Optional<String> program;

    SandboxKind(String wire, Optional<String> program) {
        this.wire = wire;
        this.program = program;
    }

    /** The spelling in profiles. */
    public String wire() {
        return wire;
    }

    /** The program this kind needs on the worker's PATH; empty for {@link #NONE}. */
    public Optional<String> program() {
        return program;
    }

    /** The kind spelled {@code wire}, if there is one. */
    public static Optional<SandboxKind> fromWire(String wire) {
        for (SandboxKind k : values()) {
            if (k.wire.equals(wire)) {
                return Optional.of(k);
            }
        }
        return Optional.empty();
    }
}
