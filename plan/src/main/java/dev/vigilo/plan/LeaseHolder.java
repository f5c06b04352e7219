package dev.vigilo.plan;

import dev.vigilo.common.process.LocalHost;
import dev.vigilo.common.process.ProcessRef;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import org.jdbi.v3.core.statement.SqlStatement;

/**
 * The process that claimed a run's creation lease (a creator or an admitter), recorded with the claim in
 * {@code runs.creation_holder_*}: its host name, pid space ({@link LocalHost#processNamespace()}), pid and start time.
 * A repeat in the same pid space can then tell a holder that no longer runs (killed, crashed) from a live one, and takes the lease of a dead one over at once instead of
 * waiting for it to expire. Taking a lease over is always safe: a holder that still ran after all would be fenced at
 * its next recheck, so a wrong judgement costs work, never records.
 *
 * @param host the holder's host name, or empty when its platform did not say; only describes the holder
 * @param pidSpace the holder's pid space, or empty when its platform did not say or it was recorded before control
 *     migration V28 (then it never counts as local)
 * @param process the holder's pid and start time
 */
record LeaseHolder(Optional<String> host, Optional<String> pidSpace, ProcessRef process) {
    /** Select-list columns over {@code runs} that {@link #recorded} reads. */
    static final String COLUMNS = "creation_owner AS holder_claim, creation_holder_owner AS holder_owner,"
            + " creation_holder_host AS holder_host, creation_holder_pid AS holder_pid,"
            + " creation_holder_start_ms AS holder_start_ms, creation_holder_pid_space AS holder_pid_space";

    /** {@code SET} assignments recording the holder of the claim of {@code :o}; bind them with {@link #bind}. */
    static final String ASSIGNMENTS = "creation_holder_owner = :o, creation_holder_host = :holder_host,"
            + " creation_holder_pid = :holder_pid, creation_holder_start_ms = :holder_start_ms,"
            + " creation_holder_pid_space = :holder_pid_space";

    /** {@code SET} assignments clearing the holder, for statements that clear the lease. */
    static final String CLEARED = "creation_holder_owner = NULL, creation_holder_host = NULL,"
            + " creation_holder_pid = NULL, creation_holder_start_ms = NULL, creation_holder_pid_space = NULL";

    /** What a claimant can tell of a live lease's holder. */
    enum State {
        /** The holder is a process of this pid space that no longer runs: its lease may be taken over at once. */
        DEAD_HERE,
        /** The holder is a process of this pid space and still runs. */
        ALIVE_HERE,
        /** The holder is on another host, in another container or from before a reboot: this process cannot check it. */
        ELSEWHERE
    }

    LeaseHolder {
        Objects.requireNonNull(host, "host");
        Objects.requireNonNull(pidSpace, "pidSpace");
        Objects.requireNonNull(process, "process");
    }

    /** This process, on this host. */
    static LeaseHolder current() {
        return new LeaseHolder(LocalHost.name(), LocalHost.processNamespace(), ProcessRef.current());
    }

    /** Binds {@link #ASSIGNMENTS}' holder parameters (the owner {@code :o} is the caller's). */
    <S extends SqlStatement<S>> S bind(S statement) {
        return statement
                .bind("holder_host", host.orElse(null))
                .bind("holder_pid_space", pidSpace.orElse(null))
                .bind("holder_pid", process.pid())
                .bind(
                        "holder_start_ms",
                        process.startEpochMilli() == ProcessRef.UNKNOWN_START ? null : process.startEpochMilli());
    }

    /**
     * The holder a row selected with {@link #COLUMNS} records for its current claim; empty when none is recorded for
     * it (nobody holds the lease, or an earlier version claimed it).
     */
    static Optional<LeaseHolder> recorded(Map<String, Object> row) {
        Object claim = row.get("holder_claim");
        Object pid = row.get("holder_pid");
        if (!(claim instanceof UUID) || !claim.equals(row.get("holder_owner")) || !(pid instanceof Number p)) {
            return Optional.empty();
        }
        Object start = row.get("holder_start_ms");
        return Optional.of(new LeaseHolder(
                Optional.ofNullable((String) row.get("holder_host")),
                Optional.ofNullable((String) row.get("holder_pid_space")),
                new ProcessRef(p.longValue(), start instanceof Number s ? s.longValue() : ProcessRef.UNKNOWN_START)));
    }

    /**
     * Whether the holder runs, as far as this process can tell: only a holder recorded in this process's pid space is
     * judged from this process table. A shared host name is not enough (two containers with host networking share one,
     * each with its own pids), and a holder whose pid space was not recorded is never judged.
     */
    State state() {
        Optional<String> here = LocalHost.processNamespace();
        if (pidSpace.isEmpty() || here.isEmpty() || !pidSpace.equals(here)) {
            return State.ELSEWHERE;
        }
        return process.isAlive() ? State.ALIVE_HERE : State.DEAD_HERE;
    }

    /**
     * {@code pid 1234 on this host (build-7), still running}, {@code pid 1234 on host build-8}, or, for a holder
     * elsewhere under this host's name, {@code pid 1234 in another pid space of host build-7}.
     */
    String describe(State state) {
        String where;
        if (state != State.ELSEWHERE) {
            where = "on this host (" + host.orElse("unnamed") + ")";
        } else if (host.isPresent() && host.equals(LocalHost.name())) {
            where = "in another pid space of host " + host.get() + " (another container, or before a reboot)";
        } else {
            where = host.map(h -> "on host " + h).orElse("on an unnamed host");
        }
        return "pid " + process.pid() + " " + where + (state == State.ALIVE_HERE ? ", still running" : "");
    }
}
