package dev.vigilo.exec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vigilo.common.errors.ConflictException;
import dev.vigilo.common.errors.DamagedException;
import dev.vigilo.common.errors.UnavailableException;
import dev.vigilo.exec.admission.Admission;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class AdmissionTest {
    @TempDir
    Path dir;

    ExecFixture fx;
    Placements placements;

    @BeforeEach
    void setUp() throws IOException {
        fx = new ExecFixture(dir, 30_000);
        placements = Placements.open(fx.control, ExecutionConfig.defaults());
    }

    @AfterEach
    void tearDown() {
        placements.close();
        fx.close();
    }

    private long controlCount(String sql, UUID run) {
        return fx.control
                .jdbi()
                .withHandle(
                        h -> h.createQuery(sql).bind("r", run).mapTo(Long.class).one());
    }

    private long count(String sql, UUID run) {
        return placements
                .jdbi(ExecutionConfig.CONTROL)
                .withHandle(
                        h -> h.createQuery(sql).bind("r", run).mapTo(Long.class).one());
    }

    @Test
    void admitsActivatesAndPublishesDispatchCursors() {
        UUID run = fx.prepare();
        Admission.Result r = new Admission(placements, fx.storage).admit(run);
        assertThat(r.outcome()).isEqualTo(Admission.Outcome.ACTIVATED);
        assertThat(r.chunks()).isEqualTo(300);
        assertThat(fx.runStatus(run)).isEqualTo("pending");
        // One scheduling row per chunk, none per case.
        assertThat(count("SELECT count(*) FROM exec_chunks WHERE run_id = :r", run))
                .isEqualTo(300);
        assertThat(count("SELECT count(*) FROM exec_run_shards WHERE run_id = :r", run))
                .isEqualTo(128);
        List<Map<String, Object>> routes = fx.control
                .jdbi()
                .withHandle(h -> h.createQuery("SELECT shard, state, dispatch_cursor, placement FROM"
                                + " exec_shard_routes WHERE run_id = :r ORDER BY shard")
                        .bind("r", run)
                        .mapToMap()
                        .list());
        assertThat(routes).hasSize(128);
        assertThat(routes).allSatisfy(m -> {
            assertThat(m.get("state")).isEqualTo("active");
            assertThat(m.get("placement")).isEqualTo("control");
        });
        // 300 chunks over 128 shards: shards 0..43 have 3, the rest 2.
        assertThat(((Number) routes.get(0).get("dispatch_cursor")).longValue()).isEqualTo(3);
        assertThat(((Number) routes.get(127).get("dispatch_cursor")).longValue())
                .isEqualTo(2);
        // A second admission finds the run past creating and changes nothing.
        Admission.Result again = new Admission(placements, fx.storage).admit(run);
        assertThat(again.outcome()).isEqualTo(Admission.Outcome.NOT_CREATING);
        assertThat(again.status()).isEqualTo("pending");
    }

    @Test
    void lostAcknowledgementReplaysIdenticalRows() {
        UUID run = fx.prepare();
        Admission.Hooks crashAfterSecondLocalCommit = new Admission.Hooks() {
            @Override
            public void afterLocalCommit(long pageEnd) {
                if (pageEnd == 300) {
                    throw new UnavailableException("simulated loss of the control acknowledgement");
                }
            }
        };
        assertThatThrownBy(() -> new Admission(placements, fx.storage, crashAfterSecondLocalCommit).admit(run))
                .isInstanceOf(UnavailableException.class);
        assertThat(fx.runStatus(run)).isEqualTo("creating");
        long cursor = fx.control
                .jdbi()
                .withHandle(h -> h.createQuery("SELECT admission_cursor FROM run_plans WHERE run_id = :r")
                        .bind("r", run)
                        .mapTo(Long.class)
                        .one());
        assertThat(cursor).isEqualTo(256);
        // The second page's rows were committed locally; only the control acknowledgement is missing.
        assertThat(count("SELECT count(*) FROM exec_chunks WHERE run_id = :r", run))
                .isEqualTo(300);
        // No dispatch cursor before activation.
        assertThat(controlCount(
                        "SELECT count(*) FROM exec_shard_routes WHERE run_id = :r AND dispatch_cursor IS NOT NULL",
                        run))
                .isZero();
        Admission.Result r = new Admission(placements, fx.storage).admit(run);
        assertThat(r.outcome()).isEqualTo(Admission.Outcome.ACTIVATED);
        assertThat(count("SELECT count(*) FROM exec_chunks WHERE run_id = :r", run))
                .isEqualTo(300);
    }

    @Test
    void chunkAlteredAfterPublicationFailsTheRunWithoutDispatch() throws IOException {
        UUID run = fx.prepare();
        Path chunk = fx.storeRoot.resolve("plans/" + run + "/chunks/0000000007.json");
        byte[] bytes = Files.readAllBytes(chunk);
        bytes[bytes.length / 2] ^= 1;
        chunk.toFile().setWritable(true);
        Files.write(chunk, bytes);
        assertThatThrownBy(() -> new Admission(placements, fx.storage).admit(run))
                .isInstanceOf(DamagedException.class)
                .hasMessageContaining("0000000007.json")
                .hasMessageContaining("altered");
        assertThat(fx.runStatus(run)).isEqualTo("failed");
        assertThat(controlCount(
                        "SELECT count(*) FROM exec_shard_routes WHERE run_id = :r"
                                + " AND (dispatch_cursor IS NOT NULL OR state = 'active')",
                        run))
                .isZero();
    }

    @Test
    void aLocalRowThatDiffersIsAnImmutableSeedConflict() {
        UUID run = fx.prepare();
        Admission.Hooks stop = new Admission.Hooks() {
            @Override
            public void afterAcknowledgement(long cursor) {
                throw new UnavailableException("stop after the first page");
            }
        };
        assertThatThrownBy(() -> new Admission(placements, fx.storage, stop).admit(run))
                .isInstanceOf(UnavailableException.class);
        placements
                .jdbi(ExecutionConfig.CONTROL)
                .useHandle(h -> h.createUpdate(
                                "UPDATE exec_run_shards SET cases = cases + 1 WHERE run_id = :r" + " AND shard = 5")
                        .bind("r", run)
                        .execute());
        assertThatThrownBy(() -> new Admission(placements, fx.storage).admit(run))
                .isInstanceOf(ConflictException.class)
                .hasMessageContaining("immutable seed conflict")
                .hasMessageContaining("shard 5");
        assertThat(fx.runStatus(run)).isEqualTo("failed");
    }
}
