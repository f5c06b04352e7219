package dev.vigilo.exec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.common.errors.NotFoundException;
import dev.vigilo.exec.admission.Admission;
import dev.vigilo.exec.view.RunCatalog;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RunCatalogTest {
    @TempDir
    Path dir;

    ExecFixture fx;
    Placements placements;
    RunCatalog catalog;

    @BeforeEach
    void setUp() throws IOException {
        fx = new ExecFixture(dir, 1_000);
        placements = Placements.open(fx.control, ExecutionConfig.defaults());
        catalog = new RunCatalog(placements);
    }

    @AfterEach
    void tearDown() {
        placements.close();
        fx.close();
    }

    @Test
    void listPagesNewestFirstWithProgress() {
        List<UUID> runs = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            UUID r = fx.prepare();
            new Admission(placements, fx.storage).admit(r);
            runs.add(r);
        }
        new SimulatedWorker(placements, fx.store, runs.get(1)).run(3);
        List<RunCatalog.RunSummary> seen = new ArrayList<>();
        Optional<RunCatalog.Cursor> after = Optional.empty();
        int pages = 0;
        do {
            RunCatalog.Page p = catalog.list(after, 2);
            assertThat(p.runs()).hasSizeLessThanOrEqualTo(2);
            seen.addAll(p.runs());
            after = p.next().map(c -> RunCatalog.Cursor.parse(c.toString()));
            pages++;
        } while (after.isPresent());
        assertThat(pages).isEqualTo(3);
        assertThat(seen.stream().map(RunCatalog.RunSummary::runId))
                .containsExactlyInAnyOrderElementsOf(runs)
                .doesNotHaveDuplicates();
        for (int i = 1; i < seen.size(); i++) {
            assertThat(seen.get(i).createdAt())
                    .isBeforeOrEqualTo(seen.get(i - 1).createdAt());
        }
        RunCatalog.RunSummary worked = seen.stream()
                .filter(s -> s.runId().equals(runs.get(1)))
                .findFirst()
                .orElseThrow();
        assertThat(worked.chunksDone()).isEqualTo(3);
        assertThat(worked.casesDone()).isEqualTo(300);
        assertThat(worked.cases()).isEqualTo(1_000);
        assertThat(worked.expectedChunks()).isEqualTo(10);
        assertThat(worked.datasetName()).isEqualTo("exec");
        assertThat(worked.status()).isEqualTo("pending");
        assertThat(seen.stream().filter(s -> !s.runId().equals(runs.get(1))))
                .allMatch(s -> s.chunksDone() == 0 && s.casesDone() == 0);
    }

    @Test
    void identityThroughputAndCounts() {
        UUID r = fx.prepare();
        new Admission(placements, fx.storage).admit(r);
        new SimulatedWorker(placements, fx.store, r).run(4);
        RunCatalog.PlanIdentity id = catalog.identity(r);
        assertThat(id.datasetUploadId()).isEqualTo(fx.dataset.uploadId());
        assertThat(id.datasetSourceSha256()).isEqualTo(fx.dataset.sourceSha256().toHex());
        assertThat(id.profileSha256()).hasSize(64);
        assertThat(id.root()).isPresent();
        assertThat(id.root().get().key().value())
                .isEqualTo(fx.plan(r).root().key().value());
        assertThat(id.planStatus()).isEqualTo("ready");
        assertThat(id.expectedChunks()).isEqualTo(10);

        List<RunCatalog.ThroughputPoint> points = catalog.throughput(r, 50);
        assertThat(points).isNotEmpty().hasSizeLessThanOrEqualTo(50);
        assertThat(points.stream().mapToLong(RunCatalog.ThroughputPoint::cases).sum())
                .isEqualTo(400);

        assertThat(catalog.countByStatus()).containsEntry("pending", 1L);
        RunCatalog.ActiveCounts counts = catalog.activeCounts();
        assertThat(counts.chunksByState()).containsEntry("done", 4L).containsEntry("queued", 6L);
        assertThat(counts.casesDone()).isEqualTo(400);
        assertThat(counts.casesPlanned()).isEqualTo(1_000);
        assertThat(counts.unreachable()).isEmpty();
        assertThat(counts.queuedByRun()).containsExactly(java.util.Map.entry(r, 6L));

        // A run nothing executed yet has no throughput.
        UUID idle = fx.prepare();
        new Admission(placements, fx.storage).admit(idle);
        assertThat(catalog.throughput(idle, 10)).isEmpty();
    }

    @Test
    void refusals() {
        assertThatThrownBy(() -> catalog.identity(UUID.randomUUID())).isInstanceOf(NotFoundException.class);
        assertThatThrownBy(() -> catalog.throughput(UUID.randomUUID(), 10)).isInstanceOf(NotFoundException.class);
        assertThatThrownBy(() -> catalog.list(Optional.empty(), 0)).isInstanceOf(InvalidInputException.class);
        for (String bad : new String[] {
            "", "x", "12_nope", "12_" + UUID.randomUUID().toString().toUpperCase()
        }) {
            assertThatThrownBy(() -> RunCatalog.Cursor.parse(bad)).isInstanceOf(InvalidInputException.class);
        }
    }
}
