package dev.vigilo.exec;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigilo.common.crash.RandomKills;
import dev.vigilo.control.TestPostgres;
import dev.vigilo.exec.admission.Admission;
import dev.vigilo.exec.audit.RunVerifier;
import dev.vigilo.exec.record.ChunkRows;
import dev.vigilo.exec.record.Receipt;
import dev.vigilo.exec.record.RunRecords;
import dev.vigilo.exec.record.TranscriptStore;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A worker process killed with SIGKILL in the middle of an epoch: its agent blocks in epoch 2 of case 7 (the first
 * time only), the test waits for that, checks that other epochs of the chunk already left transcripts, and kills the
 * worker. A second worker takes the chunk over once its lease expires and executes it again. Afterwards every case
 * has exactly {@code count} recorded epochs, numbered 1..count, each with transcripts of the generation that
 * completed the chunk; the killed generation's transcripts exist but no counted receipt references them; and
 * {@code vigilo verify} finds the run intact.
 */
class EpochKillIT {
    private static final int CASES = 150;
    private static final int EPOCHS = 3;
    private static final long LEASE_MS = 2_000;

    @TempDir
    Path dir;

    @Test
    @Timeout(value = 5, unit = TimeUnit.MINUTES)
    void aWorkerKilledMidEpochLeavesExactlyCountEpochsPerCase() throws Exception {
        Path blocked = dir.resolve("blocked");
        Path agent = dir.resolve("agent.sh");
        // Case 7, epoch 2, first execution only (mkdir is atomic): record the pid and sleep until killed.
        Files.writeString(agent, """
                #!/bin/sh
                n=$(sed -n 's/.*what is \\([0-9]*\\) \\* 2.*/\\1/p')
                if [ "$n" -eq 7 ] && [ "$VIGILO_EPOCH" -eq 2 ] && mkdir "%s" 2>/dev/null; then
                  echo $$ > "%s/pid.tmp" && mv "%s/pid.tmp" "%s/pid"
                  exec sleep 600
                fi
                echo $((n * 2))
                """.formatted(blocked, blocked, blocked, blocked));
        Files.setPosixFilePermissions(agent, PosixFilePermissions.fromString("rwxr-xr-x"));
        Path config = dir.resolve("execution.toml");
        Files.writeString(config, "[placements.a]\njdbc_url = \"" + TestPostgres.newDatabaseUrl() + "\"\n");
        ExecutionConfig exec = ExecutionConfig.parse(config);
        try (ExecFixture fx = new ExecFixture(dir, CASES);
                Placements placements = Placements.open(fx.control, exec)) {
            UUID run = fx.prepare("""
                    name: epoch-kill
                    agent: {kind: command, command: ["%s"], timeout_seconds: 900}
                    evaluators:
                      - {name: exact, kind: exact_match}
                    gates:
                      - {name: all, required_evaluators: [exact], min_pass_rate: 1.0}
                    epochs: {count: %d, reducer: all}
                    """.formatted(agent, EPOCHS));
            fx.placeOn(run, exec);
            new Admission(placements, fx.storage).admit(run);

            Process first = worker(fx, config);
            try {
                RandomKills.awaitWhileAlive(
                        first,
                        Duration.ofMinutes(2),
                        "the agent blocking in case 7's epoch 2",
                        () -> Files.exists(blocked.resolve("pid")));
                // Mid-epoch, mid-chunk: other executions of chunk 0 have already written their transcripts (a
                // transcript container of chunk 0 under generation 1, created before the partial receipt link that
                // first lists them, within the worker's flush interval).
                boolean written = RandomKills.awaitWhileAlive(
                        first, Duration.ofMinutes(1), "a transcript container of chunk 0", () -> {
                            try {
                                return transcripts(fx, run).stream().anyMatch(k -> k.contains("/0000000000/g1-c"));
                            } catch (IOException e) {
                                throw new java.io.UncheckedIOException(e);
                            }
                        });
                assertThat(written)
                        .as("a transcript container of chunk 0 before the kill")
                        .isTrue();
                assertThat(RandomKills.killAfter(first, 0)).isTrue();
                assertThat(first.waitFor()).isEqualTo(RandomKills.KILLED);
            } finally {
                first.destroyForcibly();
                killBlockedAgent(blocked);
            }

            Process second = worker(fx, config);
            assertThat(second.waitFor(3, TimeUnit.MINUTES)).isTrue();
            assertThat(second.exitValue()).isZero();
            assertThat(fx.runStatus(run)).isEqualTo("settled");

            List<RunRecords.Route> routes = fx.control.jdbi().withHandle(h -> RunRecords.routes(h, run, ""));
            Set<String> referenced = new HashSet<>();
            int cases = 0;
            Iterator<ChunkRows.Row> rows = ChunkRows.cursor(placements, run, routes, true);
            while (rows.hasNext()) {
                ChunkRows.Row row = rows.next();
                Receipt r = ChunkRows.receipt(run, fx.store, row);
                if (r.chunkIndex() == 0) {
                    assertThat(r.leaseGeneration())
                            .as("the killed chunk ran again")
                            .isGreaterThan(1);
                }
                for (Receipt.CaseResult c : r.cases()) {
                    cases++;
                    assertThat(c.epochs()).as("case %s", c.id()).hasSize(EPOCHS);
                    assertThat(c.gates()).containsEntry("all", Receipt.GateOutcome.PASSED);
                    for (int e = 1; e <= EPOCHS; e++) {
                        Receipt.CaseResult epoch = c.epochs().get(e - 1);
                        assertThat(epoch.errored()).isFalse();
                        assertThat(epoch.transcripts()).hasSize(1);
                        Receipt.TranscriptRef t = epoch.transcripts().get(0);
                        // A slice of a container of the lease of the receipt, or of the killed one and carried forward
                        // from its partial receipts (docs/execution.md, "Resume from partial receipts").
                        boolean ofAGeneration = false;
                        for (long g = 1; g <= r.leaseGeneration(); g++) {
                            ofAGeneration |=
                                    TranscriptStore.isContainerKey(t.ref().key(), run, r.chunkIndex(), g);
                        }
                        assertThat(ofAGeneration).as(t.ref().key().value()).isTrue();
                        assertThat(t.offset()).isPresent();
                        referenced.add(t.ref().key().value());
                    }
                }
            }
            assertThat(cases).isEqualTo(CASES);
            // The killed generation's transcripts that no partial receipt carried forward (of chunk 0, and of any
            // other chunk it held) are in the store and count nowhere.
            List<String> orphans = new ArrayList<>(transcripts(fx, run));
            orphans.removeAll(referenced);
            assertThat(orphans).allMatch(k -> k.contains("/g1-c"));

            RunVerifier.Report report = new RunVerifier(placements, fx.storage).verify(run);
            assertThat(report.problem()).isEmpty();
            assertThat(report.intact()).isTrue();
            assertThat(report.checked().transcripts()).isEqualTo((long) CASES * EPOCHS);
            assertThat(report.gates().get(0).passAtK().orElseThrow().casesWithPasses(EPOCHS))
                    .isEqualTo(CASES);
        } finally {
            killBlockedAgent(blocked);
        }
    }

    private static Process worker(ExecFixture fx, Path config) throws IOException {
        List<String> cmd = RandomKills.java(List.of("-Xmx256m"));
        cmd.addAll(List.of(
                "-cp",
                System.getProperty("java.class.path"),
                ExecMain.class.getName(),
                "worker",
                fx.controlUrl,
                fx.storeRoot.toString(),
                config.toString(),
                "4",
                Long.toString(LEASE_MS)));
        Path logs = Path.of("target", "crash-logs");
        Files.createDirectories(logs);
        return new ProcessBuilder(cmd)
                .redirectErrorStream(true)
                .redirectOutput(logs.resolve("epoch-worker-" + System.nanoTime() + ".log")
                        .toFile())
                .start();
    }

    /** Every transcript key of the run in the local store. */
    private static Set<String> transcripts(ExecFixture fx, UUID run) throws IOException {
        Path root = fx.storeRoot.resolve("runs/" + run + "/transcripts");
        Set<String> out = new HashSet<>();
        if (!Files.isDirectory(root)) {
            return out;
        }
        try (Stream<Path> files = Files.walk(root)) {
            files.filter(Files::isRegularFile)
                    .filter(f -> f.getFileName().toString().endsWith(".jsonl.zstd"))
                    .forEach(f -> out.add(fx.storeRoot.relativize(f).toString()));
        }
        return out;
    }

    /** The killed worker's agent outlives it (nobody reaps it): end it. */
    private static void killBlockedAgent(Path blocked) throws IOException {
        Path pid = blocked.resolve("pid");
        if (Files.exists(pid)) {
            ProcessHandle.of(Long.parseLong(Files.readString(pid).trim())).ifPresent(ProcessHandle::destroyForcibly);
        }
    }
}
