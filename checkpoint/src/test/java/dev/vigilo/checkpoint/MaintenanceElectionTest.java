package dev.vigilo.checkpoint;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigilo.common.crash.ChildJvm;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The maintenance role is exclusive across processes and passes on when its holder is killed with
 * kill -9.
 */
class MaintenanceElectionTest {
    @TempDir
    Path root;

    /** Child: elect, print ELECTED (or NOT_ELECTED), then hold the role until killed. */
    public static void main(String[] args) throws Exception {
        try (CheckpointLog log = CheckpointLog.openOrCreate(new LogLocation(Path.of(args[0]), "pipe", "elect"))) {
            var m = log.tryElectMaintenance();
            System.out.println(m.isPresent() ? "ELECTED" : "NOT_ELECTED");
            System.out.flush();
            Thread.sleep(120_000);
        }
    }

    @Test
    void roleIsExclusiveAndSurvivesTheHoldersDeath() throws Exception {
        Process holder = new ProcessBuilder(
                        ChildJvm.command(root, MaintenanceElectionTest.class.getName(), root.toString()))
                .redirectError(ProcessBuilder.Redirect.DISCARD)
                .start();
        try (BufferedReader out =
                new BufferedReader(new InputStreamReader(holder.getInputStream(), StandardCharsets.UTF_8))) {
            assertThat(out.readLine()).isEqualTo("ELECTED");
            try (CheckpointLog log = CheckpointLog.open(new LogLocation(root, "pipe", "elect"))) {
                assertThat(log.tryElectMaintenance()).isEmpty();
                holder.destroyForcibly();
                assertThat(holder.waitFor(30, TimeUnit.SECONDS)).isTrue();
                try (Maintenance m = log.tryElectMaintenance().orElseThrow()) {
                    assertThat(m.runOnce(3_600_000).indexRefreshed()).isFalse(); // empty log: nothing to index
                }
            }
        } finally {
            holder.destroyForcibly();
        }
    }
}
