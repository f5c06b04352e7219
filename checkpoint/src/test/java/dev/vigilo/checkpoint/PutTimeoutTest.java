package dev.vigilo.checkpoint;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigilo.common.crash.ChildJvm;
import dev.vigilo.common.errors.UnavailableException;
import dev.vigilo.common.errors.VigiloException;
import dev.vigilo.storage.S3ProxyFixture;
import dev.vigilo.storage.StallingTcpProxy;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The put-timeout path: a durable put that does not complete (here: Lance's WAL writes are
 * black-holed by a stalling TCP proxy in front of s3proxy, so put() waits on a request that never
 * gets an answer, while every other request passes) fails after {@link WriterOptions#putTimeout()} with {@link UnavailableException} instead of
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
        // Every request of the log goes through the proxy (args[0]); the test stalls only WAL writes.
        LogLocation loc = new LogLocation(
                new LogRoot(S3ProxyFixture.specAt(java.net.URI.create(args[0]), ""), "timeout"), "pipe", "t");
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
        ProcessBuilder pb = new ProcessBuilder(ChildJvm.command(
                        tmp, PutTimeoutTest.class.getName(), proxy.endpoint().toString()))
                .redirectError(ProcessBuilder.Redirect.DISCARD);
        S3ProxyFixture.standardChainOnly(pb.environment(), tmp);
        Process p = pb.start();
        List<String> lines = new ArrayList<>();
        try (BufferedReader out =
                new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            assertThat(out.readLine()).isEqualTo("WROTE");
            // Lance's next WAL write hangs; manifest reads and everything else still pass.
            proxy.stallRequestsMatching(Pattern.compile("PUT \\S*/_mem_wal/\\S*/wal/\\S* HTTP/1\\.1"));
            p.getOutputStream().write('\n');
            p.getOutputStream().flush();
            String l;
            while ((l = out.readLine()) != null) {
                lines.add(l);
            }
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
