package dev.vigilo.checkpoint;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigilo.common.errors.UnavailableException;
import dev.vigilo.common.errors.VigiloException;
import dev.vigilo.storage.S3ProxyFixture;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The put-timeout path: a durable put that does not complete (here: the network path of Lance's WAL
 * writes is black-holed by a stalling TCP proxy, so put() waits on a request that never gets an
 * answer) fails after {@link WriterOptions#putTimeout()} with {@link UnavailableException} instead of
 * hanging the caller; the writer then refuses further writes and close() returns without waiting
 * for the stuck call. (The FINDINGS case, a put that blocks after fencing, did not reproduce in
 * Lance 7.0.0: fenced puts returned in 10-45 ms and dropped their rows, which the fencing check
 * catches; see docs/formats/checkpoint-log.md.)
 */
class PutTimeoutTest {
    @TempDir
    Path tmp;

    /**
     * Child: writes one batch, waits for a line on stdin, writes again with a 2 s put timeout and
     * reports.
     */
    public static void main(String[] args) throws Exception {
        // Lance's ShardWriter reads AWS_ENDPOINT (the stalling proxy); the dataset and our manifest
        // reads go to the
        // object store directly (args[0]), so only the WAL put hangs.
        Map<String, String> env = new java.util.HashMap<>(System.getenv());
        env.put("AWS_ENDPOINT", args[0]);
        LogLocation loc = LogLocation.of("s3://" + S3ProxyFixture.BUCKET + "/timeout", "pipe", "t", env);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        CheckpointLog log = CheckpointLog.openOrCreate(loc);
        LogWriter w = log.openWriter("tw", new WriterOptions(0, Duration.ofSeconds(2)));
        w.write(TestBatches.itemWithStep(w.epoch(), "t-0", 1));
        System.out.println("WROTE");
        System.out.flush();
        in.readLine(); // the test stalls the WAL's network path now
        long t0 = System.nanoTime();
        try {
            w.write(TestBatches.itemWithStep(w.epoch(), "t-1", 1));
            System.out.println("UNEXPECTED success");
        } catch (VigiloException e) {
            System.out.println("FAILED "
                    + e.getClass().getSimpleName()
                    + " "
                    + (System.nanoTime() - t0) / 1_000_000
                    + " "
                    + e.getMessage().contains("did not complete within"));
        }
        try {
            w.write(TestBatches.itemWithStep(w.epoch(), "t-2", 1));
            System.out.println("UNEXPECTED second success");
        } catch (VigiloException e) {
            System.out.println("REFUSED " + e.getClass().getSimpleName());
        }
        w.close();
        System.out.println("CLOSED");
        System.out.flush();
        Runtime.getRuntime().halt(0); // Lance's native retry threads are still busy with the dead endpoint
    }

    @Test
    void aPutThatDoesNotCompleteTimesOutAndTheWriterRefusesFurtherWrites() throws Exception {
        try (S3ProxyFixture s3 = S3ProxyFixture.start();
                StallingTcpProxy proxy = new StallingTcpProxy(s3.endpoint().getPort())) {
            run(s3, proxy);
        }
    }

    private void run(S3ProxyFixture s3, StallingTcpProxy proxy) throws Exception {
        ProcessBuilder pb = new ProcessBuilder(List.of(
                        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                        "--add-opens=java.base/java.nio=ALL-UNNAMED",
                        "-Djava.io.tmpdir=" + ChildTmp.of(tmp),
                        "-cp",
                        System.getProperty("java.class.path"),
                        PutTimeoutTest.class.getName(),
                        s3.endpoint().toString()))
                .redirectError(ProcessBuilder.Redirect.DISCARD);
        Map<String, String> env = pb.environment();
        env.put("AWS_ENDPOINT", "http://127.0.0.1:" + proxy.port());
        env.put("AWS_REGION", S3ProxyFixture.REGION);
        env.put("AWS_ACCESS_KEY_ID", s3.accessKey());
        env.put("AWS_SECRET_ACCESS_KEY", s3.secretKey());
        env.put("AWS_ALLOW_HTTP", "true");
        env.put("AWS_VIRTUAL_HOSTED_STYLE_REQUEST", "false");
        Process p = pb.start();
        List<String> lines = new ArrayList<>();
        try (BufferedReader out =
                new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            assertThat(out.readLine()).isEqualTo("WROTE");
            proxy.stall(); // Lance's next WAL request hangs
            p.getOutputStream().write('\n');
            p.getOutputStream().flush();
            String l;
            while ((l = out.readLine()) != null) lines.add(l);
            assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        } finally {
            p.destroyForcibly();
        }
        assertThat(lines).hasSize(3);
        String[] failed = lines.get(0).split(" ");
        assertThat(failed[0]).isEqualTo("FAILED");
        assertThat(failed[1]).isEqualTo("UnavailableException");
        assertThat(Long.parseLong(failed[2])).isBetween(2_000L, 20_000L);
        assertThat(failed[3]).isEqualTo("true");
        assertThat(lines.get(1)).isEqualTo("REFUSED UnavailableException");
        assertThat(lines.get(2)).isEqualTo("CLOSED");
    }
}
