package dev.vigilo.checkpoint;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.vigilo.common.crash.ChildJvm;
import dev.vigilo.common.errors.DamagedException;
import dev.vigilo.common.errors.FencedException;
import dev.vigilo.common.time.MovableClock;
import dev.vigilo.storage.S3Clients;
import dev.vigilo.storage.S3ProxyFixture;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.S3Exception;

/**
 * The S3 maintenance lease on s3proxy: conditional PUTs, exclusivity, renewal, takeover after the
 * holder's death.
 */
class S3LeaseTest {
    @TempDir
    static Path tmp;

    private static final ObjectMapper JSON = new ObjectMapper();

    static S3ProxyFixture s3;
    static S3Client client;

    @BeforeAll
    static void start() {
        s3 = S3ProxyFixture.start();
        client = S3Clients.open(s3.spec(""));
    }

    @AfterAll
    static void stop() {
        client.close();
        s3.close();
    }

    static LogLocation location(String experiment) {
        return new LogLocation(new LogRoot(s3.spec(""), "lease"), "pipe", experiment);
    }

    /**
     * Child: args = endpoint experiment (credentials in system properties); acquires a 6 s lease,
     * prints ELECTED, never renews.
     */
    public static void main(String[] args) throws Exception {
        LogLocation loc = new LogLocation(
                new LogRoot(S3ProxyFixture.specAt(java.net.URI.create(args[0]), ""), "lease"), "pipe", args[1]);
        Optional<Election> e = S3Lease.tryAcquire(loc, "child", Duration.ofSeconds(6));
        System.out.println(e.isPresent() ? "ELECTED" : "NOT_ELECTED");
        System.out.flush();
        Thread.sleep(120_000);
    }

    @Test
    void s3proxyHonoursIfNoneMatchAndIfMatchOnPut() {
        String key = "probe/conditional";
        String etag = client.putObject(
                        b -> b.bucket(S3ProxyFixture.BUCKET).key(key).ifNoneMatch("*"), RequestBody.fromString("one"))
                .eTag();
        assertThatThrownBy(() -> client.putObject(
                        b -> b.bucket(S3ProxyFixture.BUCKET).key(key).ifNoneMatch("*"), RequestBody.fromString("two")))
                .isInstanceOfSatisfying(
                        S3Exception.class, e -> assertThat(e.statusCode()).isEqualTo(412));
        assertThatThrownBy(() -> client.putObject(
                        b -> b.bucket(S3ProxyFixture.BUCKET).key(key).ifMatch("\"0123456789abcdef0123456789abcdef\""),
                        RequestBody.fromString("three")))
                .isInstanceOfSatisfying(
                        S3Exception.class, e -> assertThat(e.statusCode()).isEqualTo(412));
        String etag2 = client.putObject(
                        b -> b.bucket(S3ProxyFixture.BUCKET).key(key).ifMatch(etag), RequestBody.fromString("four"))
                .eTag();
        assertThat(etag2).isNotEqualTo(etag);
        assertThat(client.getObjectAsBytes(b -> b.bucket(S3ProxyFixture.BUCKET).key(key))
                        .asUtf8String())
                .isEqualTo("four");
    }

    @Test
    void leaseIsExclusiveAndPassesOnOnlyAfterTheKilledHoldersLeaseExpired() throws Exception {
        LogLocation loc = location("killed");
        Process holder = new ProcessBuilder(ChildJvm.command(
                        tmp,
                        List.of("-Daws.accessKeyId=" + s3.accessKey(), "-Daws.secretAccessKey=" + s3.secretKey()),
                        S3LeaseTest.class.getName(),
                        s3.endpoint().toString(),
                        "killed"))
                .redirectError(ProcessBuilder.Redirect.DISCARD)
                .start();
        try (BufferedReader out =
                new BufferedReader(new InputStreamReader(holder.getInputStream(), StandardCharsets.UTF_8))) {
            assertThat(out.readLine()).isEqualTo("ELECTED");
            String stored = storedLease("killed");
            long expiresAt = JSON.readTree(stored).get("expires_at_ms").asLong();
            assertThat(JSON.readTree(stored).get("holder").asText()).isEqualTo("child");
            // The contender's clock stands one millisecond before the child's lease ends, however long this
            // machine takes: every attempt until it moves must be refused.
            MovableClock clock = new MovableClock(expiresAt - 1);
            assertThat(S3Lease.tryAcquire(loc, "me", Duration.ofSeconds(30), clock))
                    .isEmpty();
            holder.destroyForcibly(); // kill -9: the lease is neither renewed nor released
            assertThat(holder.waitFor(30, TimeUnit.SECONDS)).isTrue();
            assertThat(S3Lease.tryAcquire(loc, "me", Duration.ofSeconds(30), clock))
                    .as("a dead holder's lease is still valid until it expires")
                    .isEmpty();
            assertThat(storedLease("killed")).isEqualTo(stored);
            clock.set(expiresAt); // a lease is valid before its expiry, not at it
            Optional<Election> mine = S3Lease.tryAcquire(loc, "me", Duration.ofSeconds(30), clock);
            assertThat(mine).as("takeover at expiry").isPresent();
            assertThat(JSON.readTree(storedLease("killed")).get("holder").asText())
                    .isEqualTo("me");
            mine.get().confirm();
            assertThat(S3Lease.tryAcquire(loc, "other", Duration.ofSeconds(30), clock))
                    .isEmpty();
            mine.get().release();
            assertThat(S3Lease.tryAcquire(loc, "other", Duration.ofSeconds(30), clock))
                    .isPresent(); // released: at once
        } finally {
            holder.destroyForcibly();
        }
    }

    @Test
    void aHolderWhoseExpiredLeaseWasTakenOverLosesTheRoleOnItsNextStep() {
        LogLocation loc = location("stale");
        MovableClock clock = new MovableClock(System.currentTimeMillis());
        Election slow =
                S3Lease.tryAcquire(loc, "slow", Duration.ofMillis(500), clock).orElseThrow();
        clock.advance(Duration.ofMillis(400));
        slow.confirm(); // renewal by If-Match on its own ETag works, and moves the expiry on
        clock.advance(Duration.ofMillis(499));
        assertThat(S3Lease.tryAcquire(loc, "fresh", Duration.ofSeconds(30), clock))
                .as("taken before the renewed lease expired")
                .isEmpty();
        clock.advance(Duration.ofMillis(1));
        Election fresh =
                S3Lease.tryAcquire(loc, "fresh", Duration.ofSeconds(30), clock).orElseThrow();
        assertThatThrownBy(slow::confirm).isInstanceOf(FencedException.class);
        fresh.confirm();
        slow.release(); // must not release the new holder's lease
        assertThat(S3Lease.tryAcquire(loc, "third", Duration.ofSeconds(30), clock))
                .isEmpty();
        fresh.release();
    }

    @Test
    void aLeaseRecordWithAKeyGivenTwiceIsDamageNotAChoice() {
        LogLocation loc = location("twice");
        // A lenient reader would take the later, far-future expiry and report the lease as held.
        client.putObject(
                b -> b.bucket(S3ProxyFixture.BUCKET).key("lease/datagen_checkpoints/pipe/twice/maintenance.lease"),
                RequestBody.fromString(
                        "{\"holder\":\"a\",\"expires_at_ms\":1,\"expires_at_ms\":" + Long.MAX_VALUE + "}"));
        assertThatThrownBy(() -> S3Lease.tryAcquire(loc, "b", Duration.ofSeconds(30)))
                .isInstanceOf(DamagedException.class)
                .hasMessageContaining("is not a lease record")
                .hasMessageContaining("expires_at_ms");
    }

    private static String storedLease(String experiment) {
        return client.getObjectAsBytes(b -> b.bucket(S3ProxyFixture.BUCKET)
                        .key("lease/datagen_checkpoints/pipe/" + experiment + "/maintenance.lease"))
                .asUtf8String();
    }
}
