package dev.vigilo.plan;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vigilo.common.errors.CancelledException;
import dev.vigilo.common.errors.ConflictException;
import dev.vigilo.common.errors.DamagedException;
import dev.vigilo.common.errors.FencedException;
import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.common.errors.NotFoundException;
import dev.vigilo.dataset.DatasetReader;
import dev.vigilo.storage.Deadline;
import dev.vigilo.storage.StorageConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PreparationTest {
    static final int CASES = 2_345;
    static final UUID UPLOAD = UUID.fromString("00000000-0000-4000-8000-000000000001");

    @TempDir
    static Path dir;

    static PlanFixture fx;

    @BeforeAll
    static void setUp() throws Exception {
        fx = new PlanFixture(dir.resolve("a"), CASES, UPLOAD);
    }

    @AfterAll
    static void tearDown() {
        fx.close();
    }

    private static CreateRequest request(UUID runId, String profile, boolean prepareOnly) {
        return new CreateRequest(ProfileInput.inline(profile), UPLOAD, Optional.of(runId), prepareOnly);
    }

    @Test
    void prepareOnlyHoldsTheRunThenRepeatingRequestsExecution() {
        UUID run = UUID.randomUUID();
        CreateResult r = fx.preparation(PlanFixture.fast()).create(request(run, PlanFixture.PROFILE, true));
        assertThat(r.status()).isEqualTo(RunState.CREATING);
        assertThat(r.planStatus()).isEqualTo(PlanStatus.READY);
        assertThat(r.dispatchable()).isFalse();
        assertThat(r.expectedChunks()).isEqualTo(24);
        RunStatus s = new RunStatusReader(fx.control.jdbi()).status(run);
        assertThat(s.status()).isEqualTo(RunState.CREATING);
        assertThat(s.creationProgress().planStatus()).isEqualTo(PlanStatus.READY);
        assertThat(s.creationProgress().planChunkCursor()).isEqualTo(24);
        assertThat(s.expectedChunks()).isEqualTo(24);
        assertThat(s.shards()).hasSize(24);
        assertThat(s.shards().stream().mapToLong(RunStatus.Shard::cases).sum()).isEqualTo(CASES);
        assertThat(s.shards().get(23).cases()).isEqualTo(45);
        long math = 0;
        long hard = 0;
        for (int i = 0; i < CASES; i++) {
            math += i % 3 == 0 ? 1 : 0;
            hard += i % 7 == 0 ? 1 : 0;
        }
        assertThat(s.shards().stream().mapToLong(x -> x.gates().get("all")).sum())
                .isEqualTo(CASES);
        assertThat(s.shards().stream().mapToLong(x -> x.gates().get("math")).sum())
                .isEqualTo(math);
        assertThat(s.shards().stream().mapToLong(x -> x.gates().get("hard")).sum())
                .isEqualTo(hard);
        assertThat(s.shards().get(0).gates().keySet()).containsExactly("all", "math", "hard");
        assertThat(new RunStatusReader(fx.control.jdbi()).executionRequested(run))
                .isFalse();

        CreateResult again = fx.preparation(PlanFixture.fast()).create(request(run, PlanFixture.PROFILE, false));
        assertThat(again.status()).isEqualTo(RunState.CREATING);
        assertThat(again.root()).isEqualTo(r.root());
        RunStatus after = new RunStatusReader(fx.control.jdbi()).status(run);
        // Execution is requested; admission (module exec) moves the run on to pending.
        assertThat(again.executionRequested()).isTrue();
        assertThat(new RunStatusReader(fx.control.jdbi()).executionRequested(run))
                .isTrue();
        assertThat(after.status()).isEqualTo(RunState.CREATING);
        assertThat(after.dispatchable()).isFalse();
    }

    @Test
    void theRunsIdentityIsRecordedBesideItsFrozenInputs() {
        UUID command = UUID.randomUUID();
        fx.preparation(PlanFixture.fast()).create(request(command, PlanFixture.PROFILE, true));
        UUID http = UUID.randomUUID();
        fx.preparation(PlanFixture.fast())
                .create(request(
                        http,
                        PlanFixture.PROFILE.replace(
                                "agent: {kind: command, command: [./agent]}",
                                "agent: {kind: http, url: \"http://127.0.0.1:9/v1/chat/completions\", model: m-7}"),
                        true));
        assertThat(identity(command)).containsExactly("fixture", "command", "agent");
        assertThat(identity(http)).containsExactly("fixture", "http", "m-7");
    }

    private static java.util.List<Object> identity(UUID run) {
        return fx.control
                .jdbi()
                .withHandle(h -> h
                        .createQuery("SELECT profile_name, agent_kind, agent_model FROM run_plans WHERE run_id = :r")
                        .bind("r", run)
                        .mapToMap()
                        .one()
                        .values()
                        .stream()
                        .toList());
    }

    @Test
    void planFilesFollowTheirFormats() {
        UUID run = UUID.randomUUID();
        CreateResult r = fx.preparation(PlanFixture.fast()).create(request(run, PlanFixture.PROFILE, false));
        assertThat(r.status()).isEqualTo(RunState.CREATING);
        TreeMap<String, byte[]> files = fx.planFiles(run);
        // 24 chunks, 1 index document, 3 gates, configuration, manifest
        assertThat(files).hasSize(24 + 1 + 3 + 2);
        long objects = fx.control
                .jdbi()
                .withHandle(
                        h -> h.createQuery("SELECT count(*) FROM run_plan_objects WHERE run_id = :r AND acknowledged")
                                .bind("r", run)
                                .mapTo(Long.class)
                                .one());
        assertThat(objects).isEqualTo(files.size());
        long cases = 0;
        for (int i = 0; i < 24; i++) {
            ChunkFile c = ChunkFile.decode(files.get(PlanLayout.chunk(run, i).value()));
            assertThat(c.shard()).isEqualTo(i % 128);
            assertThat(c.chunkId()).isEqualTo(Fold.chunkId(run, i));
            assertThat(c.firstOrdinal()).isEqualTo(cases);
            assertThat(c.cases().size()).isLessThanOrEqualTo(100);
            cases += c.cases().size();
        }
        assertThat(cases).isEqualTo(CASES);
        PlanManifest m = PlanManifest.decode(files.get(PlanLayout.manifest(run).value()));
        assertThat(m.shards()).hasSize(24);
        GateFile hard = GateFile.decode(files.get(PlanLayout.gate(run, 2).value()), run, 2);
        assertThat(hard.next()).isEmpty();
        assertThat(hard.shards())
                .extracting(GateFile.ShardCount::shard)
                .isSorted()
                .hasSize(24);
        GateFile head = GateFile.decode(files.get(PlanLayout.gate(run, 0).value()), run, 0);
        assertThat(head.next()).isPresent();
        // A newer version is rejected by the parser.
        String newer =
                new String(files.get(PlanLayout.manifest(run).value())).replace("\"version\":1", "\"version\":2");
        assertThatThrownBy(() -> PlanManifest.decode(newer.getBytes())).hasMessageContaining("newer");
    }

    @Test
    void independentRunsWithTheSameIdsProduceIdenticalBytes(@TempDir Path other) throws Exception {
        UUID run = UUID.randomUUID();
        fx.preparation(PlanFixture.fast()).create(request(run, PlanFixture.PROFILE, true));
        try (PlanFixture second = new PlanFixture(other, CASES, UPLOAD)) {
            second.preparation(PlanFixture.fast()).create(request(run, PlanFixture.PROFILE, true));
            assertIdentical(fx.planFiles(run), second.planFiles(run));
        }
    }

    static void assertIdentical(TreeMap<String, byte[]> a, TreeMap<String, byte[]> b) {
        assertThat(b.keySet()).containsExactlyElementsOf(a.keySet());
        for (Map.Entry<String, byte[]> e : a.entrySet()) {
            assertThat(b.get(e.getKey())).as(e.getKey()).isEqualTo(e.getValue());
        }
    }

    @Test
    void changedProfileLimitsOrStorageAreRejectedWithoutChangingTheRun(@TempDir Path elsewhere) {
        UUID run = UUID.randomUUID();
        fx.preparation(PlanFixture.fast()).create(request(run, PlanFixture.PROFILE, true));
        String changed = PlanFixture.PROFILE.replace("min_pass_rate: 0.9", "min_pass_rate: 0.8");
        assertThatThrownBy(() -> fx.preparation(PlanFixture.fast()).create(request(run, changed, false)))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("run " + run)
                .hasMessageContaining("profile differs");
        String limited = PlanFixture.PROFILE + "limits: {max_cases: 5000}\n";
        assertThatThrownBy(() -> fx.preparation(PlanFixture.fast()).create(request(run, limited, false)))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("limits differs");
        RunPreparation wrongStore =
                new RunPreparation(fx.control.jdbi(), StorageConfig.localDefault(elsewhere), PlanFixture.fast());
        assertThatThrownBy(() -> wrongStore.create(request(run, PlanFixture.PROFILE, false)))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("does not resolve")
                .hasMessageContaining("run " + run);
        RunStatus s = new RunStatusReader(fx.control.jdbi()).status(run);
        assertThat(s.status()).isEqualTo(RunState.CREATING);
        assertThat(s.dispatchable()).isFalse();
    }

    @Test
    void badBindingInputsChangeNothing() {
        UUID run = UUID.randomUUID();
        assertThatThrownBy(() -> fx.preparation(PlanFixture.fast())
                        .create(new CreateRequest(
                                ProfileInput.inline(PlanFixture.PROFILE), UUID.randomUUID(), Optional.of(run), false)))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("run " + run)
                .hasMessageContaining("no finalized dataset");
        String small = PlanFixture.PROFILE + "limits: {max_cases: 100}\n";
        assertThatThrownBy(() -> fx.preparation(PlanFixture.fast()).create(request(run, small, false)))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("limits.max_cases: the dataset has 2345");
        String epochs = PlanFixture.PROFILE + "epochs: {count: 3, reducer: at_least:4}\n";
        assertThatThrownBy(() -> fx.preparation(PlanFixture.fast()).create(request(run, epochs, false)))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("run " + run)
                .hasMessageContaining("epochs.reducer: at_least:K needs 1 <= K <= epochs.count (3), got 4");
        assertThatThrownBy(() -> fx.preparation(PlanFixture.fast()).create(request(run, "name: x\n", false)))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("run " + run)
                .hasMessageContaining("agent: is required");
        assertThatThrownBy(() -> new RunStatusReader(fx.control.jdbi()).status(run))
                .isInstanceOf(NotFoundException.class);
    }

    @Test
    void anAgentUrlCarryingCredentialsIsRefusedAndNothingIsCreated() {
        UUID run = UUID.randomUUID();
        String profile = PlanFixture.PROFILE.replace(
                "agent: {kind: command, command: [./agent]}",
                "agent: {kind: http, url: 'http://user:pw@127.0.0.1:9/v1/chat/completions?key=sk-live-123',"
                        + " model: m, api_key_env: KEY}");
        assertThat(profile).contains("user:pw");
        long rowsBefore = controlRows();
        assertThatThrownBy(() -> fx.preparation(PlanFixture.fast()).create(request(run, profile, false)))
                .isInstanceOf(InvalidInputException.class)
                .hasMessage("run " + run + ": --profile:2:26: agent.url: 'url' must not carry credentials; put the key"
                        + " in the variable api_key_env names");
        assertThatThrownBy(() -> new RunStatusReader(fx.control.jdbi()).status(run))
                .isInstanceOf(NotFoundException.class);
        assertThat(fx.planFiles(run)).isEmpty();
        assertThat(controlRows()).isEqualTo(rowsBefore);
    }

    /** Rows of every table of the control database. */
    private static long controlRows() {
        return fx.control.jdbi().withHandle(h -> {
            long n = 0;
            for (String t : h.createQuery("SELECT quote_ident(table_schema) || '.' || quote_ident(table_name)"
                            + " FROM information_schema.tables WHERE table_type = 'BASE TABLE'"
                            + " AND table_schema NOT IN ('pg_catalog', 'information_schema')")
                    .mapTo(String.class)
                    .list()) {
                n += h.createQuery("SELECT count(*) FROM " + t)
                        .mapTo(Long.class)
                        .one();
            }
            return n;
        });
    }

    @Test
    void aGateSelectingNoCaseRejectsPreparation() {
        UUID run = UUID.randomUUID();
        String profile = PlanFixture.PROFILE + "  - {name: none, required_evaluators: [exact], tags_any: [nope],"
                + " min_pass_rate: 1}\n";
        assertThatThrownBy(() -> fx.preparation(PlanFixture.fast()).create(request(run, profile, false)))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("gates[3]: gate \"none\" selects no case");
        RunStatus s = new RunStatusReader(fx.control.jdbi()).status(run);
        assertThat(s.creationProgress().planStatus()).isEqualTo(PlanStatus.REJECTED);
        assertThat(s.shards()).isEmpty();
        assertThatThrownBy(() -> fx.preparation(PlanFixture.fast()).create(request(run, profile, false)))
                .hasMessageContaining("selects no case");
    }

    @Test
    void aTamperedPlanFileIsDetectedAtPublication() {
        UUID run = UUID.randomUUID();
        PreparationOptions.Hooks tamper = new PreparationOptions.Hooks() {
            @Override
            public void beforePublication() {
                try {
                    Path f = fx.storeRoot.resolve(PlanLayout.chunk(run, 5).value());
                    byte[] b = Files.readAllBytes(f);
                    b[b.length / 2] ^= 1;
                    Files.write(f, b);
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }
        };
        PreparationOptions o = new PreparationOptions(
                Duration.ofSeconds(30), Duration.ofSeconds(1), Duration.ofSeconds(30), 8, tamper);
        assertThatThrownBy(() -> fx.preparation(o).create(request(run, PlanFixture.PROFILE, false)))
                .isInstanceOf(DamagedException.class)
                .hasMessageContaining(PlanLayout.chunk(run, 5).value())
                .hasMessageContaining("altered");
        RunStatus s = new RunStatusReader(fx.control.jdbi()).status(run);
        assertThat(s.creationProgress().planStatus()).isEqualTo(PlanStatus.PREPARING);
        assertThat(s.shards()).isEmpty();
        // A repeat re-verifies acknowledged files and refuses too.
        assertThatThrownBy(() -> fx.preparation(PlanFixture.fast()).create(request(run, PlanFixture.PROFILE, false)))
                .isInstanceOf(DamagedException.class)
                .hasMessageContaining("failed verification");
    }

    @Test
    void aLiveLeaseRejectsACompetingCreator() throws Exception {
        UUID run = UUID.randomUUID();
        CountDownLatch registered = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        PreparationOptions.Hooks pause = new PreparationOptions.Hooks() {
            @Override
            public void afterRegister(int files) {
                registered.countDown();
                try {
                    release.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        };
        PreparationOptions o =
                new PreparationOptions(Duration.ofSeconds(30), Duration.ofSeconds(1), Duration.ofSeconds(30), 8, pause);
        AtomicReference<Object> first = new AtomicReference<>();
        Thread t = new Thread(() -> {
            try {
                first.set(fx.preparation(o).create(request(run, PlanFixture.PROFILE, false)));
            } catch (RuntimeException e) {
                first.set(e);
            }
        });
        t.start();
        registered.await();
        assertThatThrownBy(() -> fx.preparation(PlanFixture.fast()).create(request(run, PlanFixture.PROFILE, false)))
                .isInstanceOf(ConflictException.class)
                .hasMessageContaining("run " + run)
                .hasMessageContaining("another creator holds the creation lease");
        release.countDown();
        t.join();
        assertThat(first.get()).isInstanceOf(CreateResult.class);
        assertThat(((CreateResult) first.get()).status()).isEqualTo(RunState.CREATING);
    }

    @Test
    void aHeldLeaseSaysWhenItCanBeReclaimedInTheConflictAndInStatus() throws Exception {
        UUID run = UUID.randomUUID();
        // A creator dies mid-way; its lease is then held as a killed process leaves it (owner set, expiry ahead).
        PreparationOptions.Hooks crash = new PreparationOptions.Hooks() {
            @Override
            public void afterAcknowledge(long prefix) {
                throw new IllegalStateException("simulated crash");
            }
        };
        PreparationOptions o =
                new PreparationOptions(Duration.ofSeconds(30), Duration.ofSeconds(1), Duration.ofSeconds(30), 8, crash);
        assertThatThrownBy(() -> fx.preparation(o).create(request(run, PlanFixture.PROFILE, false)))
                .hasMessageContaining("simulated crash");
        fx.control
                .jdbi()
                .useHandle(h -> h.execute(
                        "UPDATE runs SET creation_owner = gen_random_uuid(),"
                                + " creation_lease_expires_at = clock_timestamp() + interval '252 seconds' WHERE run_id = ?",
                        run));
        java.time.Instant now = java.time.Instant.now();

        Throwable conflict = org.assertj.core.api.Assertions.catchThrowable(
                () -> fx.preparation(PlanFixture.fast()).create(request(run, PlanFixture.PROFILE, false)));
        assertThat(conflict).isInstanceOf(ConflictException.class).hasMessageStartingWith("run " + run + ": ");
        java.util.regex.Matcher m = java.util.regex.Pattern.compile(
                        "another creator holds the creation lease \\(reclaimable in 4m (\\d+)s, at (\\S+Z)\\)")
                .matcher(conflict.getMessage());
        assertThat(m.find()).as(conflict.getMessage()).isTrue();
        assertThat(Integer.parseInt(m.group(1))).isBetween(2, 12);
        assertThat(java.time.Instant.parse(m.group(2)))
                .isBetween(now.plusSeconds(240), now.plusSeconds(254))
                .isEqualTo(java.time.Instant.parse(m.group(2)).truncatedTo(java.time.temporal.ChronoUnit.SECONDS));

        RunStatus s = new RunStatusReader(fx.control.jdbi()).status(run);
        assertThat(s.creationProgress().planStatus()).isEqualTo(PlanStatus.PREPARING);
        CreationLease lease = s.creationLease().orElseThrow();
        assertThat(lease.reclaimableInSeconds()).isBetween(242L, 252L);
        assertThat(lease.expiresAt()).isEqualTo(java.time.Instant.parse(m.group(2)));
        var json = ProfileJson.MAPPER.readTree(s.toJson());
        List<String> keys = new ArrayList<>();
        json.fieldNames().forEachRemaining(keys::add);
        assertThat(keys)
                .containsExactly(
                        "run_id",
                        "status",
                        "dispatchable",
                        "creation_progress",
                        "creation_lease",
                        "expected_chunks",
                        "shards");
        assertThat(json.at("/creation_lease/expires_at").asText()).isEqualTo(m.group(2));
        assertThat(json.at("/creation_lease/reclaimable_in_seconds").asLong()).isEqualTo(lease.reclaimableInSeconds());

        // Once the lease expired, status shows none and the same command reclaims the run and resumes.
        fx.control
                .jdbi()
                .useHandle(h -> h.execute(
                        "UPDATE runs SET creation_lease_expires_at = clock_timestamp() - interval '1 second'"
                                + " WHERE run_id = ?",
                        run));
        RunStatus expired = new RunStatusReader(fx.control.jdbi()).status(run);
        assertThat(expired.creationLease()).isEmpty();
        assertThat(expired.toJson()).doesNotContain("creation_lease");
        assertThat(fx.preparation(PlanFixture.fast())
                        .create(request(run, PlanFixture.PROFILE, false))
                        .status())
                .isEqualTo(RunState.CREATING);
        assertThat(new RunStatusReader(fx.control.jdbi()).status(run).creationLease())
                .as("released on return")
                .isEmpty();
    }

    @Test
    void anExpiredLeaseIsReclaimedAndTheOldCreatorIsFenced() {
        UUID run = UUID.randomUUID();
        List<RuntimeException> seen = new ArrayList<>();
        PreparationOptions.Hooks steal = new PreparationOptions.Hooks() {
            boolean done;

            @Override
            public void afterAcknowledge(long prefix) {
                if (!done) {
                    done = true;
                    // Another creator claims after expiry: simulate by expiring the lease in SQL.
                    fx.control
                            .jdbi()
                            .useHandle(h -> h.execute(
                                    "UPDATE runs SET creation_lease_expires_at ="
                                            + " clock_timestamp() - interval '1 second' WHERE run_id = ?",
                                    run));
                    try {
                        fx.preparation(PlanFixture.fast()).create(request(run, PlanFixture.PROFILE, true));
                    } catch (RuntimeException e) {
                        seen.add(e);
                    }
                }
            }
        };
        PreparationOptions o =
                new PreparationOptions(Duration.ofSeconds(30), Duration.ofSeconds(1), Duration.ofSeconds(30), 8, steal);
        assertThatThrownBy(() -> fx.preparation(o).create(request(run, PlanFixture.PROFILE, true)))
                .isInstanceOf(FencedException.class)
                .hasMessageContaining("another creator claimed the run");
        assertThat(seen).isEmpty();
        RunStatus s = new RunStatusReader(fx.control.jdbi()).status(run);
        assertThat(s.creationProgress().planStatus()).isEqualTo(PlanStatus.READY);
    }

    @Test
    void interruptionYieldsTheLeaseAndARepeatResumes() throws Exception {
        UUID run = UUID.randomUUID();
        AtomicReference<Thread> creator = new AtomicReference<>();
        PreparationOptions.Hooks interrupt = new PreparationOptions.Hooks() {
            @Override
            public void afterAcknowledge(long prefix) {
                if (prefix >= 8) {
                    creator.get().interrupt();
                }
            }
        };
        PreparationOptions o = new PreparationOptions(
                Duration.ofSeconds(30), Duration.ofSeconds(1), Duration.ofSeconds(30), 4, interrupt);
        AtomicReference<Object> outcome = new AtomicReference<>();
        Thread t = new Thread(() -> {
            try {
                outcome.set(fx.preparation(o).create(request(run, PlanFixture.PROFILE, false)));
            } catch (RuntimeException e) {
                outcome.set(e);
            }
        });
        creator.set(t);
        t.start();
        t.join();
        assertThat(outcome.get()).isInstanceOf(CancelledException.class);
        Object owner = fx.control
                .jdbi()
                .withHandle(h -> h.createQuery("SELECT creation_owner FROM runs WHERE run_id = :r")
                        .bind("r", run)
                        .mapToMap()
                        .one()
                        .get("creation_owner"));
        assertThat(owner).isNull();
        RunStatus mid = new RunStatusReader(fx.control.jdbi()).status(run);
        assertThat(mid.creationProgress().planChunkCursor()).isBetween(8L, 23L);
        CreateResult r = fx.preparation(PlanFixture.fast()).create(request(run, PlanFixture.PROFILE, false));
        assertThat(r.status()).isEqualTo(RunState.CREATING);
        assertThat(r.filesReverified()).isGreaterThanOrEqualTo(8);
        assertThat(r.generation().value()).isEqualTo(2);
        assertThat(fx.store.list(PlanLayout.prefix(run), Deadline.after(Duration.ofSeconds(10))))
                .hasSize(30);
    }

    @Test
    void gateCountFilesListZeroEntriesForUsedShards() {
        UUID run = UUID.randomUUID();
        String profile = PlanFixture.PROFILE + "  - {name: first, required_evaluators: [exact], tags_all: [first],"
                + " min_pass_rate: 1}\n";
        fx.preparation(PlanFixture.fast()).create(request(run, profile, true));
        GateFile first =
                GateFile.decode(fx.planFiles(run).get(PlanLayout.gate(run, 3).value()), run, 3);
        assertThat(first.selectedCases()).isEqualTo(150);
        assertThat(first.shards()).hasSize(24);
        assertThat(first.shards().get(0).count()).isEqualTo(100);
        assertThat(first.shards().get(1).count()).isEqualTo(50);
        assertThat(first.shards().subList(2, 24)).allMatch(c -> c.count() == 0);
        RunStatus s = new RunStatusReader(fx.control.jdbi()).status(run);
        assertThat(s.shards().get(5).gates()).containsEntry("first", 0L);
    }

    @Test
    void aChangedSourceIdentityIsRejected() {
        UUID run = UUID.randomUUID();
        fx.preparation(PlanFixture.fast()).create(request(run, PlanFixture.PROFILE, true));
        // The catalog row is immutable, so a changed source can only show up as a run frozen against another one.
        fx.control
                .jdbi()
                .useHandle(h -> h.execute(
                        "UPDATE run_plans SET dataset_source_sha256 = repeat('0', 64),"
                                + " dataset_membership_uuid = gen_random_uuid() WHERE run_id = ?",
                        run));
        assertThatThrownBy(() -> fx.preparation(PlanFixture.fast()).create(request(run, PlanFixture.PROFILE, false)))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("dataset source hash differs")
                .hasMessageContaining("dataset membership differs");
        assertThat(new RunStatusReader(fx.control.jdbi()).status(run).status()).isEqualTo(RunState.CREATING);
    }

    @Test
    void reusingADatasetNeverUpdatesItsCatalogRow() {
        String before = fx.control
                .jdbi()
                .withHandle(h -> h.createQuery(
                                "SELECT xmin::text || ':' || row(d.*)::text FROM dataset_uploads d WHERE upload_id = :u")
                        .bind("u", UPLOAD)
                        .mapTo(String.class)
                        .one());
        fx.preparation(PlanFixture.fast()).create(request(UUID.randomUUID(), PlanFixture.PROFILE, true));
        fx.preparation(PlanFixture.fast()).create(request(UUID.randomUUID(), PlanFixture.PROFILE, false));
        String after = fx.control
                .jdbi()
                .withHandle(h -> h.createQuery(
                                "SELECT xmin::text || ':' || row(d.*)::text FROM dataset_uploads d WHERE upload_id = :u")
                        .bind("u", UPLOAD)
                        .mapTo(String.class)
                        .one());
        assertThat(after).isEqualTo(before);
    }

    @Test
    void aResumeStartsAtTheChunkCursorWithoutReadingTheDatasetBeforeIt(@TempDir Path other) throws Exception {
        UUID upload = UUID.randomUUID();
        try (PlanFixture fixture = new PlanFixture(other, 2_400, upload)) {
            UUID run = UUID.randomUUID();
            PreparationOptions.Hooks stop = new PreparationOptions.Hooks() {
                @Override
                public void afterAcknowledge(long prefix) {
                    if (prefix >= 11) {
                        throw new IllegalStateException("stopped at chunk " + prefix);
                    }
                }
            };
            PreparationOptions o = new PreparationOptions(
                    Duration.ofSeconds(30), Duration.ofSeconds(1), Duration.ofSeconds(30), 4, stop);
            CreateRequest request =
                    new CreateRequest(ProfileInput.inline(PlanFixture.PROFILE), upload, Optional.of(run), false);
            assertThatThrownBy(() -> fixture.preparation(o).create(request)).hasMessageContaining("stopped at chunk");
            long cursor = new RunStatusReader(fixture.control.jdbi())
                    .status(run)
                    .creationProgress()
                    .planChunkCursor();
            assertThat(cursor).isBetween(11L, 23L);
            // Alter the first case file (ordinals 0-1023, all below the cursor): the resume takes those cases from the
            // acknowledged chunk files, so it never reads that file, and still checks the whole dataset's identity.
            var first = DatasetReader.open(fixture.dataset, fixture.store)
                    .caseFilesInRange(0, 1)
                    .get(0);
            assertThat(first.endOrdinal()).isLessThanOrEqualTo(cursor * 100);
            Path victim = fixture.storeRoot.resolve(first.ref().key().value());
            byte[] b = Files.readAllBytes(victim);
            b[b.length - 10] ^= 1;
            Files.write(victim, b);
            CreateResult resumed = fixture.preparation(PlanFixture.fast()).create(request);
            assertThat(resumed.planStatus()).isEqualTo(PlanStatus.READY);
            assertThat(resumed.cases()).isEqualTo(2_400);
            assertThat(resumed.filesReverified()).isGreaterThanOrEqualTo(cursor);
            // A new run has to read the whole dataset, and so finds the damage.
            assertThatThrownBy(() -> fixture.preparation(PlanFixture.fast())
                            .create(new CreateRequest(
                                    ProfileInput.inline(PlanFixture.PROFILE),
                                    upload,
                                    Optional.of(UUID.randomUUID()),
                                    false)))
                    .isInstanceOf(DamagedException.class)
                    .hasMessageContaining(first.ref().key().value());
        }
    }

    @Test
    void aDamagedDatasetIsNotPrepared(@TempDir Path other) throws Exception {
        UUID upload = UUID.randomUUID();
        try (PlanFixture damaged = new PlanFixture(other, 500, upload)) {
            var files = damaged.store.list("datasets/cases/", Deadline.after(Duration.ofSeconds(10)));
            Path victim = damaged.storeRoot.resolve(files.get(0).key().value());
            byte[] b = Files.readAllBytes(victim);
            b[b.length - 10] ^= 1;
            Files.write(victim, b);
            UUID run = UUID.randomUUID();
            assertThatThrownBy(() -> damaged.preparation(PlanFixture.fast())
                            .create(new CreateRequest(
                                    ProfileInput.inline(PlanFixture.PROFILE), upload, Optional.of(run), false)))
                    .isInstanceOf(DamagedException.class)
                    .hasMessageContaining("run " + run)
                    .hasMessageContaining(files.get(0).key().value());
            RunStatus s = new RunStatusReader(damaged.control.jdbi()).status(run);
            assertThat(s.creationProgress().planStatus()).isEqualTo(PlanStatus.PREPARING);
        }
    }

    @Test
    void aGroupRunningPastTheCheckpointIntervalAcknowledgesItsVerifiedPrefix() {
        UUID run = UUID.randomUUID();
        List<Long> checkpoints = new ArrayList<>();
        PreparationOptions.Hooks record = new PreparationOptions.Hooks() {
            @Override
            public void afterCheckpoint(long chunkPrefix) {
                checkpoints.add(chunkPrefix);
                long cursor = new RunStatusReader(fx.control.jdbi())
                        .status(run)
                        .creationProgress()
                        .planChunkCursor();
                assertThat(cursor).isEqualTo(chunkPrefix);
            }
        };
        PreparationOptions o =
                new PreparationOptions(Duration.ofSeconds(30), Duration.ofSeconds(1), Duration.ZERO, 64, record);
        CreateResult r = fx.preparation(o).create(request(run, PlanFixture.PROFILE, false));
        assertThat(r.status()).isEqualTo(RunState.CREATING);
        // Interval zero: a checkpoint after every file but the last of each group; the prefix never moves back.
        assertThat(checkpoints).isSorted().contains(1L, 23L);
    }

    @Test
    void statusJsonUsesExactlyTheDocumentedKeys() throws Exception {
        UUID run = UUID.randomUUID();
        CreateResult r = fx.preparation(PlanFixture.fast()).create(request(run, PlanFixture.PROFILE, true));
        var json = ProfileJson.MAPPER.readTree(
                new RunStatusReader(fx.control.jdbi()).status(run).toJson());
        List<String> keys = new ArrayList<>();
        json.fieldNames().forEachRemaining(keys::add);
        assertThat(keys)
                .containsExactly("run_id", "status", "dispatchable", "creation_progress", "expected_chunks", "shards");
        assertThat(json.at("/creation_progress/plan_status").asText()).isEqualTo("ready");
        assertThat(json.at("/creation_progress/plan_chunk_cursor").asLong()).isEqualTo(24);
        assertThat(json.at("/shards/3/shard").asInt()).isEqualTo(3);
        assertThat(json.at("/shards/3/cases").asLong()).isEqualTo(100);
        assertThat(json.at("/shards/3/chunks").asLong()).isEqualTo(1);
        assertThat(json.at("/shards/3/gates/all").asLong()).isEqualTo(100);
        var created = ProfileJson.MAPPER.readTree(r.toJson());
        assertThat(created.get("status").asText()).isEqualTo("creating");
        assertThat(created.get("dispatchable").asBoolean()).isFalse();
        assertThat(created.at("/root/key").asText())
                .isEqualTo(PlanLayout.manifest(run).value());
    }

    @Test
    void leaseRenewalDuringTraversalWritesOnlyWhenDue() {
        UUID run = UUID.randomUUID();
        fx.preparation(PlanFixture.fast()).create(request(run, PlanFixture.PROFILE, true));
        Authority a = new Authority(fx.control.jdbi(), run, Duration.ofMinutes(5));
        a.claim(frozenOf(run));
        String sql = "SELECT xmin::text FROM runs WHERE run_id = :r";
        String before = fx.control
                .jdbi()
                .withHandle(h ->
                        h.createQuery(sql).bind("r", run).mapTo(String.class).one());
        for (int i = 0; i < 1000; i++) {
            a.renewIfDue(Duration.ofHours(1));
        }
        String unchanged = fx.control
                .jdbi()
                .withHandle(h ->
                        h.createQuery(sql).bind("r", run).mapTo(String.class).one());
        assertThat(unchanged).as("no SQL write when renewal is not due").isEqualTo(before);
        a.renewIfDue(Duration.ZERO);
        String renewed = fx.control
                .jdbi()
                .withHandle(h ->
                        h.createQuery(sql).bind("r", run).mapTo(String.class).one());
        assertThat(renewed).isNotEqualTo(before);
        a.release();
    }

    private static FrozenInputs frozenOf(UUID run) {
        Profile p = ProfileParser.parse(PlanFixture.PROFILE);
        return fx.control.jdbi().withHandle(h -> {
            var m = h.createQuery("SELECT * FROM run_plans WHERE run_id = :r")
                    .bind("r", run)
                    .mapToMap()
                    .one();
            return new FrozenInputs(
                    UPLOAD,
                    (String) m.get("dataset_source_sha256"),
                    (UUID) m.get("dataset_membership_uuid"),
                    ((Number) m.get("dataset_case_count")).longValue(),
                    (String) m.get("storage_binding"),
                    ProfileJson.sha256(p).toHex(),
                    (String) m.get("limits"),
                    (String) m.get("evaluator_artifacts"),
                    (String) m.get("initial_placement"),
                    24,
                    FrozenInputs.Identity.of(p));
        });
    }

    @Test
    void twoCreatorsRacingForOneRunIdNeverBothPrepare() throws Exception {
        UUID run = UUID.randomUUID();
        java.util.concurrent.CyclicBarrier start = new java.util.concurrent.CyclicBarrier(2);
        List<Object> outcomes = java.util.Collections.synchronizedList(new ArrayList<>());
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            Thread t = new Thread(() -> {
                try {
                    start.await();
                    outcomes.add(fx.preparation(PlanFixture.fast()).create(request(run, PlanFixture.PROFILE, false)));
                } catch (RuntimeException e) {
                    outcomes.add(e);
                } catch (Exception e) {
                    outcomes.add(new IllegalStateException(e));
                }
            });
            t.start();
            threads.add(t);
        }
        for (Thread t : threads) {
            t.join();
        }
        List<CreateResult> results = outcomes.stream()
                .filter(CreateResult.class::isInstance)
                .map(CreateResult.class::cast)
                .toList();
        assertThat(results).isNotEmpty();
        // Only one creator writes files: the other either met its live lease or found the plan published.
        assertThat(results.stream().filter(x -> x.filesWritten() > 0)).hasSize(1);
        outcomes.stream()
                .filter(o -> !(o instanceof CreateResult))
                .forEach(o -> assertThat(o)
                        .isInstanceOf(ConflictException.class)
                        .asString()
                        .contains("run " + run));
        assertThat(new RunStatusReader(fx.control.jdbi()).status(run).status()).isEqualTo(RunState.CREATING);
    }

    @Test
    void aRunCancelledDuringPreparationCannotPublish() {
        UUID run = UUID.randomUUID();
        PreparationOptions.Hooks cancel = new PreparationOptions.Hooks() {
            @Override
            public void beforePublication() {
                fx.control
                        .jdbi()
                        .useHandle(h -> h.execute("UPDATE runs SET status = 'cancelled' WHERE run_id = ?", run));
            }
        };
        PreparationOptions o = new PreparationOptions(
                Duration.ofSeconds(30), Duration.ofSeconds(1), Duration.ofSeconds(30), 8, cancel);
        assertThatThrownBy(() -> fx.preparation(o).create(request(run, PlanFixture.PROFILE, false)))
                .isInstanceOf(FencedException.class)
                .hasMessageContaining("no longer creating");
        RunStatus s = new RunStatusReader(fx.control.jdbi()).status(run);
        assertThat(s.creationProgress().planStatus()).isEqualTo(PlanStatus.PREPARING);
        assertThat(s.shards()).isEmpty();
        assertThatThrownBy(() -> fx.preparation(PlanFixture.fast()).create(request(run, PlanFixture.PROFILE, false)))
                .isInstanceOf(FencedException.class)
                .hasMessageContaining("cancelled");
    }

    @Test
    void watchFollowsProgressUntilThePlanIsReady() throws Exception {
        UUID run = UUID.randomUUID();
        List<RunStatus> seen = new ArrayList<>();
        List<Long> unseen = java.util.Collections.synchronizedList(new ArrayList<>());
        Object progress = new Object();
        // Lockstep: after each acknowledgement the creator waits until the watcher has seen that prefix, so the
        // watch reports every step however fast or slow this machine is.
        PreparationOptions.Hooks lockstep = new PreparationOptions.Hooks() {
            @Override
            public void afterAcknowledge(long prefix) {
                if (!unseen.isEmpty()) {
                    return; // failed already: no need to wait for every later step too
                }
                // The watch polls every 20 ms: a step it has not reported within 10 s it will not report.
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                synchronized (progress) {
                    while (seen.stream().noneMatch(x -> x.creationProgress().planChunkCursor() >= prefix)) {
                        long left = deadline - System.nanoTime();
                        if (left <= 0) {
                            unseen.add(prefix);
                            return;
                        }
                        try {
                            TimeUnit.NANOSECONDS.timedWait(progress, left);
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                            return;
                        }
                    }
                }
            }
        };
        PreparationOptions o = new PreparationOptions(
                Duration.ofSeconds(30), Duration.ofSeconds(1), Duration.ofSeconds(30), 2, lockstep);
        AtomicReference<Throwable> creatorFailed = new AtomicReference<>();
        Thread creator = new Thread(() -> {
            try {
                fx.preparation(o).create(request(run, PlanFixture.PROFILE, false));
            } catch (Throwable t) {
                creatorFailed.set(t);
            }
        });
        creator.start();
        RunStatusReader reader = new RunStatusReader(fx.control.jdbi());
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (reader.statusOrNull(run) == null) {
            assertThat(System.nanoTime() - deadline).as("the run was created").isNegative();
            Thread.sleep(5);
        }
        RunStatus last = reader.watch(run, Duration.ofMillis(20), s -> {
            if (creatorFailed.get() != null) {
                throw new AssertionError("the creation failed", creatorFailed.get()); // the plan never gets ready
            }
            synchronized (progress) {
                seen.add(s);
                progress.notifyAll();
            }
        });
        creator.join();
        assertThat(creatorFailed.get()).isNull();
        assertThat(unseen).as("acknowledged prefixes the watch never reported").isEmpty();
        assertThat(last.creationProgress().planStatus()).isEqualTo(PlanStatus.READY);
        assertThat(last.shards()).hasSize(24);
        List<Long> cursors =
                seen.stream().map(x -> x.creationProgress().planChunkCursor()).toList();
        assertThat(cursors).isSorted();
        // Several distinct steps between the first report and the last: the watch followed progress.
        assertThat(cursors.stream().distinct().count()).isGreaterThan(2);
    }
}
