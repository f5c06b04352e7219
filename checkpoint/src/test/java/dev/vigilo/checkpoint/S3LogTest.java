package dev.vigilo.checkpoint;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigilo.common.crash.ChildJvm;
import dev.vigilo.storage.S3ProxyFixture;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The log on s3proxy through Lance's own object store, configured only by the store's spec (endpoint,
 * region, path style) and credentials from the AWS default chain's shared credentials file: the child
 * JVM that drives it has no AWS_* endpoint, region or key variables (Lance's MemWAL writer gets them
 * from Vigilo, see WriterEnvironment). The maintenance phase runs the S3 lease election and the
 * cleanup of merged generations through the AWS SDK.
 */
class S3LogTest {
    @org.junit.jupiter.api.io.TempDir
    static Path tmp;

    /** Child: args = phase ("write" | "maintain" | "verify"), endpoint. */
    public static void main(String[] args) throws Exception {
        LogLocation loc = new LogLocation(
                new LogRoot(S3ProxyFixture.specAt(java.net.URI.create(args[1]), "roots"), "r1"), "pipe", "s3exp");
        try (CheckpointLog log = CheckpointLog.openOrCreate(loc)) {
            if (args[0].equals("write")) {
                try (LogWriter w = log.openWriter("s3w", WriterOptions.mergingEvery(1))) {
                    for (int i = 0; i < 20; i++) {
                        CheckpointBatch b = TestBatches.itemWithStep(w.epoch(), "s3-" + i, 2);
                        w.write(b);
                        if (i == 3) {
                            w.write(b); // a retried batch: same ids
                        }
                    }
                    CheckpointBatch.Builder b = CheckpointBatch.builder("r", w.epoch(), StepRef.of("blob", 1, null, 1));
                    b.item(ItemRef.root("s3-0"), new ItemSeq(4))
                            .set("bin", new FieldValue.BlobValue(new byte[] {1, 2, 3}))
                            .stepCompleted();
                    w.write(b.build());
                }
                System.out.println("WROTE");
            } else if (args[0].equals("maintain")) {
                // Elected through the S3 lease; merged generations go at once (zero grace), old
                // versions stay an hour.
                try (Maintenance m = log.tryElectMaintenance().orElseThrow()) {
                    System.out.println("SECOND " + log.tryElectMaintenance().isPresent());
                    Maintenance.Report rep = m.runOnce(3_600_000, 0);
                    System.out.println("REMOVED "
                            + rep.generationFoldersRemoved()
                            + " "
                            + (rep.walFilesRemoved() > 0)
                            + " "
                            + (rep.manifestsRemoved() > 0));
                }
                ShardId shard = ShardId.forWriter("pipe", "s3exp", "s3w");
                long merged;
                try (org.lance.Dataset ds = log.openDataset()) {
                    merged = MemWalFiles.mergedGenerations(ds).get(shard);
                }
                long left = log.files().list("_mem_wal/" + shard).stream()
                        .filter(n ->
                                MemWalFiles.generationOfFolder(n) > 0 && MemWalFiles.generationOfFolder(n) <= merged)
                        .count();
                System.out.println("MERGED_LEFT " + left);
            } else {
                log.openWriter("s3w", WriterOptions.DEFAULTS).close();
                try (LogReader r = log.reader()) {
                    Map<String, ItemState> all = r.foldAll();
                    System.out.println("ITEMS " + all.size());
                    System.out.println("EVENTS " + r.allEvents().size());
                    System.out.println("DISTINCT "
                            + r.allEvents().stream()
                                    .map(e -> e.eventId().value())
                                    .distinct()
                                    .count());
                    ItemState s0 = all.get("s3-0");
                    System.out.println("S0 " + s0.eventCount() + " "
                            + s0.cursor().orElseThrow().stepName());
                    byte[] blob = r.loadBlob(
                            (FieldValue.BlobRef) s0.fields().get("bin").last());
                    System.out.println("BLOB " + java.util.Arrays.toString(blob));
                }
            }
        }
    }

    @Test
    void logWorksOnS3ThroughLanceObjectStore() throws Exception {
        // 20 items x 4 events (one batch retried: still 4) + a 2-event blob batch; the verify child
        // replays and reads.
        try (S3ProxyFixture s3 = S3ProxyFixture.start()) {
            assertThat(child(s3, "write")).contains("WROTE");
            // Cleanup on S3 (AWS SDK list + delete), elected by the S3 lease; then the restarted
            // writer and the reader
            // still see every event exactly once.
            List<String> maint = child(s3, "maintain");
            assertThat(maint).contains("SECOND false", "MERGED_LEFT 0");
            assertThat(maint).anySatisfy(l -> assertThat(l).matches("REMOVED [1-9][0-9]* true true"));
            List<String> out = child(s3, "verify");
            assertThat(out).contains("ITEMS 20", "EVENTS 82", "DISTINCT 82", "S0 6 blob", "BLOB [1, 2, 3]");
        }
    }

    private static List<String> child(S3ProxyFixture s3, String phase) throws Exception {
        ProcessBuilder pb = new ProcessBuilder(ChildJvm.command(
                        tmp, S3LogTest.class.getName(), phase, s3.endpoint().toString()))
                .redirectErrorStream(true);
        S3ProxyFixture.standardChainOnly(pb.environment(), tmp);
        Process p = pb.start();
        List<String> lines = new ArrayList<>();
        try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            String l;
            while ((l = r.readLine()) != null) {
                lines.add(l);
            }
        }
        assertThat(p.waitFor(120, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as("child %s output: %s", phase, lines).isZero();
        return lines;
    }
}
