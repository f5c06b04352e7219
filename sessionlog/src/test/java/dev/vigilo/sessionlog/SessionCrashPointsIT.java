package dev.vigilo.sessionlog;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigilo.common.crash.CrashSweep;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Crash-point sweep of the session-log write-ahead log, in both encodings: a writer process creating a log and
 * appending batches (then a second process reopening it and appending more) is halted at one durable boundary (the
 * epoch file's truncation and write, the header file's creation and publication, a frame's write, a manifest's
 * temporary write and rename, after an append, the truncation of an uncommitted tail); right after the halt the log
 * verifies and holds every acknowledged batch; the same workload then finishes the log, whose events equal an
 * uninterrupted run's.
 */
class SessionCrashPointsIT {
    static final int LIMIT = 100;
    static final int BATCHES = 4;
    static final Duration CHILD_TIMEOUT = Duration.ofSeconds(60);

    @TempDir
    Path dir;

    @ParameterizedTest
    @EnumSource(Compression.class)
    @Timeout(value = 30, unit = TimeUnit.MINUTES) // the exhaustive sweep; the default selection takes a minute
    void aWriterHaltedAtAnyDurableBoundaryLosesNothingAcknowledgedAndFinishesTheSameLog(Compression c) {
        CrashSweep sweep = new CrashSweep(SessionWorkloadMain.class.getName(), List.of(), dir.resolve("children-" + c));
        Path clean = dir.resolve("clean" + c.suffix());
        // Two processes: the first creates the log and appends half, the second reopens it and appends the rest.
        List<String> boundaries = new java.util.ArrayList<>(
                sweep.trace(CHILD_TIMEOUT, clean.toString(), Integer.toString(BATCHES / 2), c.name()));
        int firstProcess = boundaries.size();
        boundaries.addAll(sweep.trace(CHILD_TIMEOUT, clean.toString(), Integer.toString(BATCHES), c.name()));
        System.out.println("session log boundaries (" + c + "): " + countByName(boundaries));
        List<String> expected = SessionWorkloadMain.events(clean);
        assertThat(expected).hasSize(2 * BATCHES);

        CrashSweep.Selection selection = CrashSweep.select(boundaries.size(), LIMIT);
        CrashSweep.forEach(
                selection,
                CrashSweep.parallelism(),
                point -> {
                    Path log = log(point, c);
                    java.nio.file.Files.createDirectories(log.getParent());
                    if (point <= firstProcess) {
                        return sweep.haltAt(
                                point, CHILD_TIMEOUT, log.toString(), Integer.toString(BATCHES / 2), c.name());
                    }
                    CrashSweep.Outcome first = sweep.run(
                            List.of(), CHILD_TIMEOUT, log.toString(), Integer.toString(BATCHES / 2), c.name());
                    assertThat(first.exitCode()).as(first.err()).isZero();
                    CrashSweep.Outcome second = sweep.haltAt(
                            point - firstProcess, CHILD_TIMEOUT, log.toString(), Integer.toString(BATCHES), c.name());
                    return new CrashSweep.Outcome(second.exitCode(), first.out() + second.out(), second.err());
                },
                (point, halted) -> {
                    Path log = log(point, c);
                    String where = c + " boundary " + point + " (" + boundaries.get(point - 1) + "), " + selection;
                    assertThat(halted.halted()).as(where + ": " + halted.err()).isTrue();
                    int acked = halted.out()
                            .lines()
                            .filter(l -> l.startsWith("ack "))
                            .mapToInt(l -> Integer.parseInt(l.substring(4)))
                            .max()
                            .orElse(0);
                    if (java.nio.file.Files.exists(log)) {
                        VerifyReport v = SessionVerifier.verify(log);
                        assertThat(v.accepted()).as(where + ": " + v.toText()).isTrue();
                        assertThat(SessionWorkloadMain.lastBatch(log))
                                .as(where + ": every acknowledged batch is in the log")
                                .isGreaterThanOrEqualTo(acked);
                    } else {
                        assertThat(acked).as(where).isZero();
                    }
                    SessionWorkloadMain.run(log, BATCHES, c, k -> {});
                    assertThat(SessionVerifier.verify(log).accepted()).as(where).isTrue();
                    assertThat(SessionWorkloadMain.events(log)).as(where).isEqualTo(expected);
                });
        System.out.println("session log crash sweep (" + c + "): "
                + selection.points().size() + " halts of " + boundaries.size() + " boundaries");
    }

    private Path log(int point, Compression c) {
        return dir.resolve("halt-" + point).resolve("session" + c.suffix());
    }

    private static Map<String, Integer> countByName(List<String> names) {
        Map<String, Integer> counts = new LinkedHashMap<>();
        names.forEach(n -> counts.merge(n, 1, Integer::sum));
        return counts;
    }
}
