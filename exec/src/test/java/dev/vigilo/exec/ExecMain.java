package dev.vigilo.exec;

import dev.vigilo.agent.AgentEnvironment;
import dev.vigilo.control.ControlDatabase;
import dev.vigilo.control.ControlSettings;
import dev.vigilo.exec.admission.Admission;
import dev.vigilo.exec.worker.Worker;
import dev.vigilo.storage.StorageConfig;
import java.nio.file.Path;
import java.time.Duration;
import java.util.UUID;

/**
 * A child process for crash tests: {@code worker CONTROL_URL STORE_ROOT EXEC_CONFIG CONCURRENCY LEASE_MS
 * [SANDBOX_ROOT]} runs a worker (its sandboxes under SANDBOX_ROOT when given) until no work is left; {@code admit CONTROL_URL STORE_ROOT EXEC_CONFIG RUN_ID LEASE_MS} admits one run.
 * Exits 0 when done; tests kill it with SIGKILL at random points. A worker prints its progress, one line per event
 * ({@code claimed RUN CHUNK MILLIS}, {@code completed RUN CHUNK MILLIS}, {@code given-back RUN CHUNK MILLIS
 * OUTCOME}, with the wall-clock time in milliseconds), so a test can tell
 * whether a worker holds work when it kills it.
 */
public final class ExecMain {
    private ExecMain() {}

    public static void main(String[] args) throws Exception {
        String mode = args[0];
        try (ControlDatabase control = ControlDatabase.open(new ControlSettings.Jdbc(args[1]));
                Placements placements = Placements.open(control, ExecutionConfig.parse(Path.of(args[3])))) {
            StorageConfig storage = StorageConfig.localDefault(Path.of(args[2]));
            if (mode.equals("worker")) {
                Duration lease = Duration.ofMillis(Long.parseLong(args[5]));
                Worker.Options options = new Worker.Options(
                        Integer.parseInt(args[4]),
                        true,
                        lease,
                        lease.dividedBy(4),
                        Duration.ofMillis(100),
                        Duration.ofMillis(300),
                        lease);
                Worker worker = args.length > 6
                        ? new Worker(
                                placements,
                                storage,
                                options,
                                new Progress(),
                                AgentEnvironment.system(),
                                Path.of(args[6]))
                        : new Worker(placements, storage, options, new Progress());
                Worker.Report r = worker.run();
                System.out.println("done " + r);
            } else {
                Admission.Result r = new Admission(placements, storage, Duration.ofMillis(Long.parseLong(args[5])))
                        .admit(UUID.fromString(args[4]));
                System.out.println("admitted " + r);
            }
        }
        System.exit(0);
    }

    /** Prints each chunk event on its own line (System.out flushes per line). */
    private static final class Progress implements Worker.Listener {
        @Override
        public void chunkClaimed(UUID runId, long chunkIndex) {
            System.out.println("claimed " + runId + " " + chunkIndex + " " + System.currentTimeMillis());
        }

        @Override
        public void chunkCompleted(UUID runId, long chunkIndex, int cases) {
            System.out.println("completed " + runId + " " + chunkIndex + " " + System.currentTimeMillis());
        }

        @Override
        public void chunkGivenBack(UUID runId, long chunkIndex, String outcome) {
            System.out.println(
                    "given-back " + runId + " " + chunkIndex + " " + System.currentTimeMillis() + " " + outcome);
        }
    }
}
