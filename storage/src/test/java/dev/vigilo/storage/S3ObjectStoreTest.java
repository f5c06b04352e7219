package dev.vigilo.storage;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vigilo.common.errors.CancelledException;
import dev.vigilo.common.errors.UnavailableException;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.http.apache5.Apache5HttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;

class S3ObjectStoreTest extends ObjectStoreContract {
    private static final String PREFIX = "contract";
    private static S3ProxyFixture s3;

    @BeforeAll
    static void startS3() {
        s3 = S3ProxyFixture.start();
    }

    @AfterAll
    static void stopS3() {
        if (s3 != null) {
            s3.close();
        }
    }

    @Override
    protected ObjectStore newStore() {
        return ObjectStores.open(s3.spec(PREFIX));
    }

    @Test
    void bindingNamesEndpointBucketAndPrefix() {
        assertThat(store().binding().value())
                .isEqualTo(
                        "s3:http://127.0.0.1:" + s3.endpoint().getPort() + "/" + S3ProxyFixture.BUCKET + "/" + PREFIX);
        try (ObjectStore bucketRoot = ObjectStores.open(s3.spec(""))) {
            assertThat(bucketRoot.binding().value()).isEqualTo("s3:" + s3.endpoint() + "/" + S3ProxyFixture.BUCKET);
        }
    }

    @Test
    void keysLiveUnderTheStorePrefix() {
        byte[] bytes = "prefixed".getBytes(UTF_8);
        ObjectRef ref = store().create(key("x"), bytes, soon());

        try (ObjectStore bucketRoot = ObjectStores.open(s3.spec(""));
                ObjectStore otherPrefix = ObjectStores.open(s3.spec("other"))) {
            ObjectKey full = ObjectKey.of(PREFIX + "/" + ref.key());
            assertThat(bucketRoot.read(new ObjectRef(full, ref.length(), ref.sha256()), soon()))
                    .isEqualTo(bytes);
            assertThat(bucketRoot.list(PREFIX + "/" + namespace(), soon()))
                    .extracting(ObjectInfo::key)
                    .containsExactly(full);
            assertThat(otherPrefix.head(ref.key(), soon())).isEmpty();
            assertThat(otherPrefix.list(namespace(), soon())).isEmpty();
        }
    }

    @Test
    void headReportsTheUploadedSha256() {
        byte[] bytes = randomBytes(4321);
        ObjectRef ref = store().create(key("digest"), bytes, soon());

        Optional<ObjectInfo> info = store().head(ref.key(), soon());
        assertThat(info).isPresent();
        assertThat(info.get().sha256()).contains(ref.sha256());
    }

    @Test
    void listSkipsKeysThatAreNotObjectKeys() {
        store().create(key("good"), new byte[1], soon());
        try (S3Client raw = rawClient()) {
            for (String bad : new String[] {".hidden", "sub/.dot", "tilde~name", "trailing/"}) {
                raw.putObject(
                        b -> b.bucket(S3ProxyFixture.BUCKET).key(PREFIX + "/" + namespace() + "/" + bad),
                        RequestBody.fromString("x"));
            }
        }

        assertThat(store().list(namespace(), soon()))
                .extracting(ObjectInfo::key)
                .containsExactly(key("good"));
    }

    @Test
    void readOfAnObjectChangedBehindTheStoreFailsVerification() {
        byte[] bytes = "original".getBytes(UTF_8);
        ObjectRef ref = ObjectRef.of(key("replaced"), bytes);
        try (S3Client raw = rawClient()) {
            raw.putObject(
                    b -> b.bucket(S3ProxyFixture.BUCKET).key(PREFIX + "/" + ref.key()),
                    RequestBody.fromString("ORIGINAL"));
        }

        assertThatThrownBy(() -> store().read(ref, soon()))
                .isInstanceOf(ObjectIntegrityException.class)
                .hasMessageContaining("SHA-256");
        assertThatThrownBy(() -> store().create(ref.key(), bytes, soon())).isInstanceOf(ObjectConflictException.class);
    }

    @Test
    void unreachableServiceIsUnavailable() throws Exception {
        int closedPort;
        try (ServerSocket socket = new ServerSocket(0)) {
            closedPort = socket.getLocalPort();
        }
        StoreSpec.S3 spec = new StoreSpec.S3(
                "down",
                Optional.of(URI.create("http://127.0.0.1:" + closedPort)),
                S3ProxyFixture.REGION,
                S3ProxyFixture.BUCKET,
                "",
                true);

        try (ObjectStore down = ObjectStores.open(spec)) {
            long start = System.nanoTime();
            assertThatThrownBy(() -> down.head(ObjectKey.of("x"), Deadline.after(Duration.ofSeconds(20))))
                    .isInstanceOf(UnavailableException.class)
                    .hasMessageContaining("head x")
                    .hasMessageContaining("cannot connect to S3 endpoint http://127.0.0.1:" + closedPort)
                    .hasMessageContaining("store \"down\"");
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(20));
        }
    }

    @Test
    void anEndpointThatAcceptsAndNeverAnswersFailsWellBeforeAGenerousDeadlineAndSaysWhatToCheck() throws Exception {
        try (SilentServer silent = new SilentServer();
                ObjectStore store = ObjectStores.open(silent.spec())) {
            long start = System.nanoTime();
            // The deadline dataset uploads use: the bound comes from the client's timeouts, not from it.
            assertThatThrownBy(() ->
                            store.create(ObjectKey.of("x"), new byte[10], Deadline.after(Duration.ofSeconds(120))))
                    .isInstanceOf(UnavailableException.class)
                    .hasMessageContaining("create x in s3:http://127.0.0.1:" + silent.socket.getLocalPort())
                    .hasMessageContaining("accepted the connection but sent no answer")
                    .hasMessageContaining("store \"silent\" names the right endpoint")
                    .hasMessageNotContaining("\n");
            Duration took = Duration.ofNanos(System.nanoTime() - start);
            assertThat(took).isGreaterThanOrEqualTo(S3Clients.SOCKET_TIMEOUT).isLessThan(Duration.ofSeconds(60));
        }
    }

    @Test
    void deadlineBoundsACallTheServiceNeverAnswers() throws Exception {
        try (SilentServer silent = new SilentServer();
                ObjectStore store = ObjectStores.open(silent.spec())) {
            long start = System.nanoTime();
            assertThatThrownBy(
                            () -> store.create(ObjectKey.of("x"), new byte[10], Deadline.after(Duration.ofMillis(700))))
                    .isInstanceOf(UnavailableException.class)
                    .hasMessageContaining("deadline");
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(5));
            assertThat(Thread.currentThread().isInterrupted()).isFalse();
        }
    }

    @Test
    void interruptCancelsACallTheServiceNeverAnswers() throws Exception {
        try (SilentServer silent = new SilentServer();
                ObjectStore store = ObjectStores.open(silent.spec())) {
            Thread caller = Thread.currentThread();
            Thread interrupter = new Thread(() -> {
                try {
                    Thread.sleep(500);
                } catch (InterruptedException e) {
                    return;
                }
                caller.interrupt();
            });
            interrupter.start();
            try {
                assertThatThrownBy(() -> store.head(ObjectKey.of("x"), Deadline.after(Duration.ofSeconds(20))))
                        .isInstanceOf(CancelledException.class);
                assertThat(Thread.currentThread().isInterrupted())
                        .as("interrupt flag after the call")
                        .isTrue();
            } finally {
                Thread.interrupted();
                interrupter.join();
            }
        }
    }

    @Test
    void missingBucketIsUnavailable() {
        StoreSpec.S3 spec = new StoreSpec.S3(
                "nobucket", Optional.of(s3.endpoint()), S3ProxyFixture.REGION, "no-such-bucket", "", true);

        try (ObjectStore store = ObjectStores.open(spec)) {
            assertThatThrownBy(() -> store.create(ObjectKey.of("x"), new byte[1], soon()))
                    .isInstanceOf(UnavailableException.class);
            assertThatThrownBy(() -> store.list("", soon())).isInstanceOf(UnavailableException.class);
        }
    }

    /** A TCP server that accepts connections and never answers, to hold a request open. */
    private static final class SilentServer implements AutoCloseable {
        private final ServerSocket socket = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        private final List<Socket> accepted = new CopyOnWriteArrayList<>();
        private final Thread acceptor = new Thread(this::acceptForever, "silent-server");

        SilentServer() throws IOException {
            acceptor.setDaemon(true);
            acceptor.start();
        }

        StoreSpec.S3 spec() {
            return new StoreSpec.S3(
                    "silent",
                    Optional.of(URI.create("http://127.0.0.1:" + socket.getLocalPort())),
                    S3ProxyFixture.REGION,
                    S3ProxyFixture.BUCKET,
                    "",
                    true);
        }

        private void acceptForever() {
            try {
                while (true) {
                    accepted.add(socket.accept());
                }
            } catch (IOException e) {
                // closed
            }
        }

        @Override
        public void close() throws IOException {
            socket.close();
            for (Socket s : accepted) {
                s.close();
            }
        }
    }

    private static S3Client rawClient() {
        return S3Client.builder()
                .httpClientBuilder(Apache5HttpClient.builder())
                .endpointOverride(s3.endpoint())
                .region(Region.of(S3ProxyFixture.REGION))
                .forcePathStyle(true)
                .credentialsProvider(
                        StaticCredentialsProvider.create(AwsBasicCredentials.create(s3.accessKey(), s3.secretKey())))
                .build();
    }
}
