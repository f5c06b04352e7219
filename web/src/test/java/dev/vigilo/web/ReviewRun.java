package dev.vigilo.web;

import dev.vigilo.control.ControlDatabase;
import dev.vigilo.dataset.DatasetCatalog;
import dev.vigilo.dataset.DatasetEntry;
import dev.vigilo.dataset.UploadProgress;
import dev.vigilo.dataset.UploadRequest;
import dev.vigilo.exec.Placements;
import dev.vigilo.exec.admission.Admission;
import dev.vigilo.exec.worker.Worker;
import dev.vigilo.plan.CreateRequest;
import dev.vigilo.plan.ProfileInput;
import dev.vigilo.plan.RunPreparation;
import dev.vigilo.storage.ObjectStore;
import dev.vigilo.storage.StorageConfig;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.UUID;

/**
 * A settled run for the review tests, executed by a real worker: six cases {@code c0..c5} ("what is N * 2"), a command
 * agent that answers wrongly for cases 2 and 5, one gate {@code all} at 0.8 (4 of 6 pass: failed).
 */
final class ReviewRun {
    private ReviewRun() {}

    static UUID execute(
            Path home, ControlDatabase control, Placements placements, StorageConfig storage, ObjectStore store)
            throws IOException {
        StringBuilder lines = new StringBuilder();
        for (int i = 0; i < 6; i++) {
            lines.append("{\"id\":\"c")
                    .append(i)
                    .append("\",\"input\":\"what is ")
                    .append(i)
                    .append(" * 2\",\"expected\":\"")
                    .append(i * 2)
                    .append("\"}\n");
        }
        Path cases = Files.writeString(home.resolve("cases.jsonl"), lines.toString());
        DatasetEntry dataset = new DatasetCatalog(control.jdbi())
                .upload(
                        new UploadRequest(cases, Optional.of("review"), Optional.of(UUID.randomUUID())),
                        store,
                        UploadProgress.NONE);
        Path agent = home.resolve("agent.sh");
        Files.writeString(agent, """
                n=$(sed -n 's/.*what is \\([0-9]*\\) \\* 2.*/\\1/p')
                if [ $((n % 3)) -eq 2 ]; then echo wrong; exit 0; fi
                echo $((n * 2))
                """);
        String profile = """
                name: review-page
                agent: {kind: command, command: [sh, "%s"], max_attempts: 1, timeout_seconds: 60}
                evaluators:
                  - {name: exact, kind: exact_match}
                gates:
                  - {name: all, required_evaluators: [exact], min_pass_rate: 0.8}
                """.formatted(agent);
        UUID run = UUID.randomUUID();
        new RunPreparation(control.jdbi(), storage)
                .create(new CreateRequest(ProfileInput.inline(profile), dataset.uploadId(), Optional.of(run), false));
        new Admission(placements, storage).admit(run);
        Worker.Options fast = new Worker.Options(
                1,
                true,
                Duration.ofSeconds(20),
                Duration.ofSeconds(2),
                Duration.ofMillis(100),
                Duration.ofMillis(200),
                Duration.ofSeconds(5));
        new Worker(placements, storage, fast, Worker.Listener.NONE).run();
        return run;
    }
}
