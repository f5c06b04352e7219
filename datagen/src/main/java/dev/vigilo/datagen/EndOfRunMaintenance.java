package dev.vigilo.datagen;

import dev.vigilo.checkpoint.CheckpointLog;
import dev.vigilo.checkpoint.Maintenance;
import dev.vigilo.common.errors.VigiloException;
import java.time.Duration;
import java.util.Optional;

/**
 * The experiment's maintenance pass at the end of a run: the run tries to become the elected
 * maintenance worker (OS lock locally, S3 lease otherwise) and, if no one else holds the role,
 * compacts the base table, refreshes the item_id index and removes merged generations and versions
 * older than {@link #KEEP}. Maintenance never affects correctness, so its failure is logged and the
 * run's result stands.
 */
final class EndOfRunMaintenance {
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(EndOfRunMaintenance.class);

    /**
     * Grace period for old versions and merged generations: a concurrent `status`/`item`/`export`
     * reader keeps its snapshot readable for this long (and Lance 7 failed a compaction after a
     * zero-window version cleanup).
     */
    static final Duration KEEP = Duration.ofHours(1);

    private EndOfRunMaintenance() {}

    /** Runs one pass if elected; returns whether it ran. */
    static boolean run(CheckpointLog log) {
        try {
            Optional<Maintenance> elected = log.tryElectMaintenance();
            if (elected.isEmpty()) {
                return false; // another worker maintains this experiment right now
            }
            try (Maintenance m = elected.get()) {
                m.runOnce(KEEP.toMillis());
            }
            return true;
        } catch (VigiloException e) {
            LOG.warn(
                    "maintenance of {} after the run failed (the log is unaffected): {}",
                    log.location().uri(),
                    e.getMessage());
            return false;
        }
    }
}
