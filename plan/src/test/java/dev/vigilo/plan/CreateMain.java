package dev.vigilo.plan;

import dev.vigilo.common.errors.ConflictException;
import dev.vigilo.common.errors.FencedException;
import dev.vigilo.control.ControlDatabase;
import dev.vigilo.control.ControlSettings;
import dev.vigilo.storage.StorageConfig;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.UUID;

/**
 * A real {@code run create} process for crash tests: {@code CreateMain JDBC_URL STORE_ROOT UPLOAD_ID RUN_ID
 * PROFILE_FILE LEASE_MILLIS GROUP_FILES PAUSE_MILLIS}; the pause after each registration and acknowledgement
 * stretches preparation so that kills land inside it (it changes no bytes). Exit 0 with the root on stdout, 3 on a lease conflict, 5 when
 * this creator's own lease ran out before it renewed it (fenced: a stalled machine), 1 otherwise.
 */
public final class CreateMain {
    private CreateMain() {}

    private record Slow(long millis) implements PreparationOptions.Hooks {
        @Override
        public void afterRegister(int files) {
            sleep();
        }

        @Override
        public void afterAcknowledge(long chunkPrefix) {
            sleep();
        }

        private void sleep() {
            try {
                Thread.sleep(millis);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    public static void main(String[] args) {
        try (ControlDatabase db = ControlDatabase.open(new ControlSettings.Jdbc(args[0]))) {
            PreparationOptions o = new PreparationOptions(
                    Duration.ofMillis(Long.parseLong(args[5])),
                    Duration.ofMillis(Long.parseLong(args[5]) / 4),
                    Duration.ofSeconds(30),
                    Integer.parseInt(args[6]),
                    new Slow(Long.parseLong(args[7])));
            CreateResult r = new RunPreparation(db.jdbi(), StorageConfig.localDefault(Path.of(args[1])), o)
                    .create(new CreateRequest(
                            ProfileInput.file(Path.of(args[4])),
                            UUID.fromString(args[2]),
                            Optional.of(UUID.fromString(args[3])),
                            false));
            System.out.println(
                    "published " + r.root().key() + " " + r.root().sha256().toHex() + " written " + r.filesWritten()
                            + " reverified " + r.filesReverified());
            System.exit(0);
        } catch (ConflictException e) {
            System.err.println(e.getMessage());
            System.exit(3);
        } catch (FencedException e) {
            System.err.println(e.getMessage());
            System.exit(5);
        } catch (RuntimeException e) {
            e.printStackTrace();
            System.exit(1);
        }
    }
}
