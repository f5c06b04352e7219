package dev.vigilo.checkpoint;

import dev.vigilo.common.errors.UnavailableException;
import dev.vigilo.storage.S3Clients;
import dev.vigilo.storage.StoreSpec;
import java.net.URI;
import java.util.LinkedHashMap;
import java.util.Map;
import software.amazon.awssdk.auth.credentials.AwsCredentials;
import software.amazon.awssdk.auth.credentials.AwsSessionCredentials;
import software.amazon.awssdk.auth.credentials.DefaultCredentialsProvider;
import software.amazon.awssdk.core.exception.SdkException;

/**
 * What Lance needs to reach a log's durable root, derived from the root's {@link StoreSpec} and credentials resolved
 * through the AWS SDK's default provider chain ({@link S3Clients#credentialsProvider()}): the storage options every
 * dataset is opened with, and the same values in the process environment for Lance's MemWAL writer, which in Lance
 * 7.0.0 ignores the dataset's storage options (see {@link WriterEnvironment}). Nothing for a local root.
 * Thread-safe; close it with its log.
 */
final class LanceStorage implements AutoCloseable {
    private final LogRoot root;
    private final DefaultCredentialsProvider credentials;

    private LanceStorage(LogRoot root, DefaultCredentialsProvider credentials) {
        this.root = root;
        this.credentials = credentials;
    }

    static LanceStorage of(LogRoot root) {
        return new LanceStorage(root, root.isLocal() ? null : S3Clients.credentialsProvider());
    }

    /**
     * Lance (object_store) storage options for the root: endpoint, region, addressing style, HTTP permission and the
     * credentials the default chain gives now (resolved again at each call, so refreshed credentials are used by
     * the next open). Empty for a local root.
     */
    Map<String, String> storageOptions() {
        if (root.isLocal()) {
            return Map.of();
        }
        StoreSpec.S3 spec = root.s3Store();
        Map<String, String> options = new LinkedHashMap<>();
        options.put("aws_region", spec.region());
        spec.endpoint().ifPresent(endpoint -> {
            options.put("aws_endpoint", lanceEndpoint(spec, endpoint));
            if ("http".equals(endpoint.getScheme())) {
                options.put("allow_http", "true");
            }
        });
        options.put("aws_virtual_hosted_style_request", Boolean.toString(!spec.pathStyle()));
        AwsCredentials resolved = resolveCredentials(spec);
        options.put("aws_access_key_id", resolved.accessKeyId());
        options.put("aws_secret_access_key", resolved.secretAccessKey());
        if (resolved instanceof AwsSessionCredentials session) {
            options.put("aws_session_token", session.sessionToken());
        }
        return Map.copyOf(options);
    }

    /**
     * Puts {@link #storageOptions()} into the process environment for Lance's MemWAL writer and keeps them there
     * until the returned lease is closed; call {@link WriterEnvironment.Lease#refresh} before each writer (re)open.
     * A no-op lease for a local root.
     */
    WriterEnvironment.Lease writerEnvironment() {
        if (root.isLocal()) {
            return WriterEnvironment.Lease.NONE;
        }
        return WriterEnvironment.acquire(root.toString(), this::storageOptions);
    }

    private AwsCredentials resolveCredentials(StoreSpec.S3 spec) {
        try {
            return credentials.resolveCredentials();
        } catch (SdkException e) {
            throw new UnavailableException(
                    "no AWS credentials for store \"" + spec.name() + "\" (" + S3Clients.endpointText(spec)
                            + "): the AWS default provider chain found none; set AWS_ACCESS_KEY_ID and"
                            + " AWS_SECRET_ACCESS_KEY, AWS_PROFILE or ~/.aws/credentials, or use an instance role",
                    e);
        }
    }

    /**
     * object_store addresses a bucket virtual-hosted style by taking the endpoint as the bucket's own URL, while
     * the AWS SDK prepends the bucket to the endpoint's host; give Lance the URL the SDK would use.
     */
    private static String lanceEndpoint(StoreSpec.S3 spec, URI endpoint) {
        String text = endpoint.toString();
        if (spec.pathStyle()) {
            return text;
        }
        return endpoint.getScheme() + "://" + spec.bucket() + "." + endpoint.getHost()
                + (endpoint.getPort() < 0 ? "" : ":" + endpoint.getPort())
                + (endpoint.getPath() == null ? "" : endpoint.getPath());
    }

    @Override
    public void close() {
        if (credentials != null) {
            credentials.close();
        }
    }
}
