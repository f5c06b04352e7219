package dev.vigilo.storage;

import java.net.URI;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import org.gaul.s3proxy.S3Proxy;
import org.gaul.s3proxy.auth.AuthenticationType;
import org.gaul.s3proxy.blobstore.BlobStore;
import org.gaul.s3proxy.nio2blob.FilesystemNio2BlobStore;
import org.gaul.s3proxy.nio2blob.TransientNio2BlobStore;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Request;

/**
 * An S3-compatible service for tests: s3proxy running in this JVM on {@code 127.0.0.1} at a free port, keeping
 * objects in memory ({@link #start()}) or in files under a directory ({@link #startOnDisk}, for workloads too large
 * for the heap, such as benchmarks), with one bucket ({@link #BUCKET}) and signature checking on.
 *
 * <p>{@link #start()} also sets the JVM system properties {@code aws.accessKeyId}, {@code aws.secretAccessKey}
 * and {@code aws.region}, so that stores opened in this JVM find the fixture's credentials through the AWS SDK's
 * default provider chain, exactly as production code does. The credentials are fixed test values, the same for
 * every fixture, so several fixtures can run at once; the properties stay set after {@link #close()}. A child
 * process does not inherit system properties: prepare its environment with {@link #standardChainOnly}.
 *
 * <p>Starting takes one to two seconds; share one fixture per test class (start it in {@code @BeforeAll}) and
 * give each test its own key prefix. Users outside this module need {@code org.gaul:s3proxy} on their test
 * classpath.
 */
public final class S3ProxyFixture implements AutoCloseable {
    /** The bucket every fixture creates. */
    public static final String BUCKET = "vigilo-test";
    /** The signing region the fixture's specs and system properties name. */
    public static final String REGION = "us-east-1";

    private static final String ACCESS_KEY = "vigilo-test-access-key";
    private static final String SECRET_KEY = "vigilo-test-secret-key";
    private static final Duration START_TIMEOUT = Duration.ofSeconds(30);

    private final S3Proxy proxy;
    private final BlobStore blobStore;
    private final URI endpoint;

    private S3ProxyFixture(S3Proxy proxy, BlobStore blobStore, URI endpoint) {
        this.proxy = proxy;
        this.blobStore = blobStore;
        this.endpoint = endpoint;
    }

    /** Starts s3proxy in memory, creates {@link #BUCKET} and publishes the credentials as system properties. */
    public static S3ProxyFixture start() {
        return start(new TransientNio2BlobStore());
    }

    /**
     * Starts s3proxy keeping its objects in files under {@code root} (created if absent; s3proxy does not fsync
     * them), creates {@link #BUCKET} and publishes the credentials as system properties. The files stay after
     * {@link #close()}; the caller removes {@code root}.
     */
    public static S3ProxyFixture startOnDisk(java.nio.file.Path root) {
        Objects.requireNonNull(root, "root");
        try {
            java.nio.file.Files.createDirectories(root);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        return start(new FilesystemNio2BlobStore(root.toAbsolutePath().toString()));
    }

    /**
     * Starts s3proxy in memory listening on {@code host} at {@code port} (0: a free one), for clients in other network
     * namespaces that reach this one only at such an address (MultiHostIT); otherwise as {@link #start()}.
     */
    public static S3ProxyFixture startAt(String host, int port) {
        return start(new TransientNio2BlobStore(), host, port);
    }

    private static S3ProxyFixture start(BlobStore blobStore) {
        return start(blobStore, "127.0.0.1", 0);
    }

    private static S3ProxyFixture start(BlobStore blobStore, String host, int port) {
        blobStore.createContainer(BUCKET);
        S3Proxy proxy = S3Proxy.builder()
                .blobStore(blobStore)
                .endpoint(URI.create("http://" + host + ":" + port))
                .awsAuthentication(AuthenticationType.AWS_V2_OR_V4, ACCESS_KEY, SECRET_KEY)
                // Tests finish their requests before closing; do not wait for idle keep-alive connections.
                .stopTimeout(0)
                .build();
        try {
            proxy.start();
            long giveUp = System.nanoTime() + START_TIMEOUT.toNanos();
            while (!"STARTED".equals(proxy.getState())) {
                if (System.nanoTime() - giveUp > 0) {
                    throw new IllegalStateException("s3proxy did not start within " + START_TIMEOUT);
                }
                Thread.sleep(10);
            }
        } catch (Exception e) {
            stopQuietly(proxy);
            blobStore.close();
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            throw new IllegalStateException("cannot start s3proxy", e);
        }
        System.setProperty("aws.accessKeyId", ACCESS_KEY);
        System.setProperty("aws.secretAccessKey", SECRET_KEY);
        System.setProperty("aws.region", REGION);
        return new S3ProxyFixture(proxy, blobStore, URI.create("http://" + host + ":" + proxy.getPort()));
    }

    /** A spec for {@link #BUCKET} under {@code prefix} (empty for the bucket root), path-style, named {@code s3}. */
    public StoreSpec.S3 spec(String prefix) {
        return specAt(endpoint, prefix);
    }

    /**
     * A spec for {@link #BUCKET} under {@code prefix} at {@code endpoint} (a fixture's, or a proxy in front of one),
     * path-style, named {@code s3}; for child processes, which have no fixture object.
     */
    public static StoreSpec.S3 specAt(URI endpoint, String prefix) {
        Objects.requireNonNull(endpoint, "endpoint");
        Objects.requireNonNull(prefix, "prefix");
        return new StoreSpec.S3("s3", Optional.of(endpoint), REGION, BUCKET, prefix, true);
    }

    /**
     * A {@code storage.toml} naming one S3 store, {@code name}, for {@link #BUCKET} under {@code prefix} at
     * {@code endpoint}: what a user writes, with no credentials.
     */
    public static String storageToml(String name, URI endpoint, String prefix) {
        return "[stores." + name + "]\n"
                + "kind = \"s3\"\n"
                + "endpoint = \"" + endpoint + "\"\n"
                + "region = \"" + REGION + "\"\n"
                + "bucket = \"" + BUCKET + "\"\n"
                + (prefix.isEmpty() ? "" : "prefix = \"" + prefix + "\"\n")
                + "path_style = true\n";
    }

    /**
     * Prepares {@code env}, a child process's environment, to find the fixture's credentials the way a user's
     * process does: through the AWS default credential chain's shared credentials file ({@code
     * AWS_SHARED_CREDENTIALS_FILE}, written into {@code dir}), with every other {@code AWS_*} variable removed, so
     * that no endpoint, region or key reaches the child through its environment.
     */
    public static void standardChainOnly(java.util.Map<String, String> env, java.nio.file.Path dir) {
        Objects.requireNonNull(env, "env");
        java.nio.file.Path file = dir.resolve("aws-credentials");
        try {
            java.nio.file.Files.writeString(
                    file,
                    "[default]\naws_access_key_id = " + ACCESS_KEY + "\naws_secret_access_key = " + SECRET_KEY + "\n");
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        env.keySet().removeIf(k -> k.toUpperCase(java.util.Locale.ROOT).startsWith("AWS_"));
        env.put("AWS_SHARED_CREDENTIALS_FILE", file.toString());
        // No other profile settings, and no instance-metadata lookups on machines that are not instances.
        env.put("AWS_CONFIG_FILE", dir.resolve("aws-config-absent").toString());
        env.put("AWS_EC2_METADATA_DISABLED", "true");
    }

    /** The service endpoint, {@code http://127.0.0.1:<port>} (or the address given to {@link #startAt}). */
    public URI endpoint() {
        return endpoint;
    }

    public String accessKey() {
        return ACCESS_KEY;
    }

    public String secretKey() {
        return SECRET_KEY;
    }

    /**
     * Deletes every object of {@link #BUCKET} whose key starts with {@code keyPrefix} (the bucket's raw keys: a
     * store's prefix included), directly in the blob store, so that long workloads do not accumulate objects.
     */
    public void deleteAll(String keyPrefix) {
        Objects.requireNonNull(keyPrefix, "keyPrefix");
        blobStore.clearContainer(
                ListObjectsV2Request.builder().bucket(BUCKET).prefix(keyPrefix).build());
    }

    /** Stops the service and drops every object it held in memory. */
    @Override
    public void close() {
        stopQuietly(proxy);
        blobStore.close();
    }

    private static void stopQuietly(S3Proxy proxy) {
        try {
            proxy.stop();
        } catch (Exception e) {
            // Stopping a test server that failed is best-effort; the JVM exits soon.
        }
    }
}
