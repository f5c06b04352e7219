package dev.vigilo.exec;

import dev.vigilo.control.ControlDatabase;
import dev.vigilo.control.ControlSettings;
import dev.vigilo.exec.admission.Admission;
import dev.vigilo.exec.worker.Worker;
import dev.vigilo.storage.StorageConfig;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.UUID;

/**
 * An execution workload for crash tests: {@code ExecWorkloadMain CONTROL_URL STORE_ROOT RUN_ID LEASE_MS ADMISSION_LEASE_MS}
 * admits the run (a prepared plan with execution requested) into the control database's execution schema under an
 * admission lease of ADMISSION_LEASE_MS, then runs one
 * worker (one chunk at a time) until every run has ended, settlement included. Running {@link #worker} again after
 * a crash finishes the same run.
 */
public final class ExecWorkloadMain {
    private ExecWorkloadMain() {}

    public static void main(String[] args) {
        Duration lease = Duration.ofMillis(Long.parseLong(args[3]));
        Duration admissionLease = Duration.ofMillis(Long.parseLong(args[4]));
        try (ControlDatabase control = ControlDatabase.open(new ControlSettings.Jdbc(args[0]));
                Placements placements = Placements.open(control, ExecutionConfig.defaults())) {
            StorageConfig storage = StorageConfig.localDefault(Path.of(args[1]));
            new Admission(placements, storage, admissionLease).admit(UUID.fromString(args[2]));
            worker(placements, storage, lease);
        }
        System.exit(0);
    }

    /** One worker, one chunk at a time, until no run is left; coordination (admission, settlement) included. */
    static Worker.Report worker(Placements placements, StorageConfig storage, Duration lease) {
        // Partial receipts per full batch only: a link written when the clock says so would make the durable steps
        // of one run differ from the next, and the crash sweep halts each child at a step numbered in a traced run.
        Worker.Options options = new Worker.Options(
                        1, true, lease, lease.dividedBy(4), Duration.ofMillis(50), Duration.ofMillis(200), lease)
                .withPartialFlush(Optional.empty());
        return new Worker(placements, storage, options, Worker.Listener.NONE).run();
    }
}
