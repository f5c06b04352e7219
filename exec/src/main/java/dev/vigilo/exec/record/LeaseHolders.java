package dev.vigilo.exec.record;

import dev.vigilo.common.process.LocalHost;
import dev.vigilo.common.process.ProcessRef;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import org.jdbi.v3.core.Handle;

/**
 * The processes holding chunk leases ({@code exec_lease_holders}, execution migration V7; docs/execution.md, "Resume
 * after a kill"), and the one judgement of a holder that died on this machine: a worker records itself under the owner
 * id its claims write into {@code exec_chunks.lease_owner}, and each {@link #refresh} of a worker ends at once the
 * leases of every holder of the same pid space ({@link LocalHost#processNamespace}) whose process no longer runs, so
 * that a worker restarted after {@code kill -9} claims its predecessor's chunks without waiting out their leases. The
 * ended leases are left to the ordinary claim, whose generation increment fences anything the dead holder could have
 * written (it writes nothing: it is dead). A holder of another pid space (another machine, another container) is never
 * judged: its leases still expire. A wrong judgement could only cost work, never records, for the same reason.
 * Every method runs inside the caller's (bounded) transaction.
 */
public final class LeaseHolders {
    /** Rows of holders that held nothing and were not refreshed for this long are removed by any refresh. */
    static final String STALE = "1 day";

    private LeaseHolders() {}

    /**
     * A process that holds leases.
     *
     * @param owner     the lease owner its claims record
     * @param hostName  its host name, for messages
     * @param pidSpace  its {@link LocalHost#processNamespace}, empty where the platform does not say (never judged)
     * @param process   its pid and start time
     */
    public record Holder(UUID owner, Optional<String> hostName, Optional<String> pidSpace, ProcessRef process) {
        public Holder {
            Objects.requireNonNull(owner, "owner");
            Objects.requireNonNull(hostName, "hostName");
            Objects.requireNonNull(pidSpace, "pidSpace");
            Objects.requireNonNull(process, "process");
        }

        /** This process, holding leases as {@code owner}. */
        public static Holder current(UUID owner) {
            return new Holder(owner, LocalHost.name(), LocalHost.processNamespace(), ProcessRef.current());
        }
    }

    /**
     * A dead holder whose leases a refresh ended.
     *
     * @param holder the dead holder
     * @param leases how many chunk leases it still held
     */
    public record Ended(Holder holder, int leases) {}

    /**
     * Records (or refreshes) {@code me} as a lease holder, then ends the leases of every other holder of its pid space
     * whose process no longer runs and removes their rows, and removes the rows of holders that hold nothing and were
     * not refreshed for a day (they stopped without removing their row, on a machine that cannot judge them).
     *
     * @return the dead holders whose leases were ended (with the number of leases each still held)
     */
    public static List<Ended> refresh(Handle h, Holder me) {
        h.createUpdate("INSERT INTO exec_lease_holders (owner, host_name, pid_space, pid, start_ms)"
                        + " VALUES (:o, :host, :space, :pid, :start) ON CONFLICT (owner) DO UPDATE"
                        + " SET refreshed_at = clock_timestamp()")
                .bind("o", me.owner())
                .bind("host", me.hostName().orElse(null))
                .bind("space", me.pidSpace().orElse(null))
                .bind("pid", me.process().pid())
                .bind("start", startOf(me.process()))
                .execute();
        List<Ended> ended = new ArrayList<>();
        if (me.pidSpace().isPresent()) {
            List<Holder> here = h.createQuery(
                            "SELECT owner, host_name, pid_space, pid, start_ms FROM exec_lease_holders"
                                    + " WHERE pid_space = :space AND owner <> :o")
                    .bind("space", me.pidSpace().get())
                    .bind("o", me.owner())
                    .map((rs, ctx) -> {
                        long start = rs.getLong("start_ms");
                        boolean unknown = rs.wasNull();
                        return new Holder(
                                rs.getObject("owner", UUID.class),
                                Optional.ofNullable(rs.getString("host_name")),
                                Optional.ofNullable(rs.getString("pid_space")),
                                new ProcessRef(rs.getLong("pid"), unknown ? ProcessRef.UNKNOWN_START : start));
                    })
                    .list();
            for (Holder other : here) {
                // Same pid space: this machine's process table answers for it (pid, zombie, start time).
                if (!other.process().isAlive()) {
                    ended.add(new Ended(other, endLeases(h, other.owner())));
                }
            }
        }
        h.createUpdate("DELETE FROM exec_lease_holders l WHERE l.refreshed_at < clock_timestamp() - CAST(:stale AS"
                        + " interval) AND NOT EXISTS (SELECT 1 FROM exec_chunks c WHERE c.state = 'leased'"
                        + " AND c.lease_owner = l.owner)")
                .bind("stale", STALE)
                .execute();
        return ended;
    }

    /**
     * Ends the leases of a dead holder now (they expire at once, so the next claim takes them, incrementing their
     * generation) and removes its row.
     *
     * @return how many leases it still held
     */
    private static int endLeases(Handle h, UUID owner) {
        int n = h.createUpdate("UPDATE exec_chunks SET lease_expires_at = clock_timestamp()"
                        + " WHERE state = 'leased' AND lease_owner = :o AND lease_expires_at > clock_timestamp()")
                .bind("o", owner)
                .execute();
        h.createUpdate("DELETE FROM exec_lease_holders WHERE owner = :o")
                .bind("o", owner)
                .execute();
        return n;
    }

    /** Removes {@code owner}'s row (a worker that stops holds nothing any more). */
    public static void forget(Handle h, UUID owner) {
        h.createUpdate("DELETE FROM exec_lease_holders WHERE owner = :o")
                .bind("o", owner)
                .execute();
    }

    private static Long startOf(ProcessRef p) {
        return p.startEpochMilli() == ProcessRef.UNKNOWN_START ? null : p.startEpochMilli();
    }
}
