package dev.vigilo.storage;

import dev.vigilo.common.errors.Causes;
import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.Objects;
import org.apache.hc.client5.http.ConnectTimeoutException;
import software.amazon.awssdk.auth.credentials.DefaultCredentialsProvider;
import software.amazon.awssdk.awscore.exception.AwsServiceException;
import software.amazon.awssdk.awscore.retry.AwsRetryStrategy;
import software.amazon.awssdk.core.checksums.RequestChecksumCalculation;
import software.amazon.awssdk.core.checksums.ResponseChecksumValidation;
import software.amazon.awssdk.core.exception.ApiCallTimeoutException;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.http.apache5.Apache5HttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.S3ClientBuilder;

/**
 * The one place Vigilo builds AWS SDK S3 clients, so that every pillar reaches a configured S3 store with the same
 * endpoint, region, addressing style, credentials and timeouts. {@link ObjectStores} uses it for S3 object stores,
 * and the checkpoint log uses it for the files and leases it manages beside Lance.
 *
 * <p>Credentials always come from the AWS SDK's default provider chain (environment variables, JVM system
 * properties, {@code ~/.aws/credentials} and {@code ~/.aws/config}, web identity, container and instance roles),
 * never from configuration. {@link #credentialsProvider()} is that chain, for code that must hand resolved
 * credentials to a library that is not the SDK.
 *
 * <p>Every client is bounded: a connection attempt gives up after {@link #CONNECT_TIMEOUT}, an attempt waiting for
 * an endpoint that accepted the connection but sends nothing gives up after {@link #SOCKET_TIMEOUT}, and a request
 * is tried at most {@link #MAX_ATTEMPTS} times, so an endpoint that never answers fails a call in about half a
 * minute. Callers with a deadline bound each request further with the SDK's call timeout.
 */
public final class S3Clients {
    /** How long to wait for a TCP connection to the endpoint. */
    public static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(5);

    /**
     * How long a connected endpoint may send nothing while a response is awaited, per attempt. S3 answers a request
     * whose body it received within a second or two; ten seconds of silence means the endpoint is not serving S3.
     */
    public static final Duration SOCKET_TIMEOUT = Duration.ofSeconds(10);

    /** Attempts per request, the first one included (the SDK's standard retry mode and backoff). */
    public static final int MAX_ATTEMPTS = 3;

    private S3Clients() {}

    /**
     * A client for the bucket {@code spec} names: its endpoint (AWS when absent), signing region and addressing
     * style, credentials from the default provider chain, and the timeouts above. Request checksums are sent only
     * where S3 requires them: Vigilo sends and verifies its own SHA-256, and some S3-compatible services reject the
     * SDK's default CRC32 trailers. Builds no connection; the caller closes the client.
     */
    public static S3Client open(StoreSpec.S3 spec) {
        Objects.requireNonNull(spec, "spec");
        S3ClientBuilder builder = S3Client.builder()
                // The SDK ships several HTTP clients; naming one avoids its classpath-order-dependent choice.
                .httpClientBuilder(Apache5HttpClient.builder()
                        .connectionTimeout(CONNECT_TIMEOUT)
                        .socketTimeout(SOCKET_TIMEOUT))
                .overrideConfiguration(o -> o.retryStrategy(AwsRetryStrategy.standardRetryStrategy().toBuilder()
                        .maxAttempts(MAX_ATTEMPTS)
                        .build()))
                // No credentialsProvider(...): the client then creates, owns and closes a default-chain provider.
                .region(Region.of(spec.region()))
                .forcePathStyle(spec.pathStyle())
                .requestChecksumCalculation(RequestChecksumCalculation.WHEN_REQUIRED)
                .responseChecksumValidation(ResponseChecksumValidation.WHEN_REQUIRED);
        spec.endpoint().ifPresent(builder::endpointOverride);
        return builder.build();
    }

    /**
     * A new provider of the AWS SDK's default credential chain, the one chain every Vigilo S3 client uses. For code
     * that hands resolved credentials to a library other than the SDK; the caller closes it.
     */
    public static DefaultCredentialsProvider credentialsProvider() {
        return DefaultCredentialsProvider.builder().build();
    }

    /**
     * Where requests for {@code spec} go, for messages: the endpoint, or {@code AWS S3 (<region>)}.
     */
    public static String endpointText(StoreSpec.S3 spec) {
        Objects.requireNonNull(spec, "spec");
        return spec.endpoint().map(Object::toString).orElse("AWS S3 (" + spec.region() + ")");
    }

    /**
     * One line saying why a request to {@code spec}'s service failed and what to check, naming the endpoint and the
     * store; never credentials. The caller puts what it was doing in front.
     */
    public static String explain(StoreSpec.S3 spec, SdkException e) {
        Objects.requireNonNull(spec, "spec");
        Objects.requireNonNull(e, "e");
        String endpoint = endpointText(spec);
        String store = "store \"" + spec.name() + "\"";
        if (e instanceof AwsServiceException service) {
            String code = service.awsErrorDetails() == null
                    ? null
                    : service.awsErrorDetails().errorCode();
            String detail = "HTTP " + service.statusCode() + (code == null ? "" : " " + code) + " from " + endpoint;
            if (service.statusCode() == 403 || service.statusCode() == 401) {
                return detail + ": the credentials from the AWS default provider chain are missing or not allowed"
                        + " for bucket " + spec.bucket() + "; check AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY,"
                        + " AWS_PROFILE or ~/.aws/credentials";
            }
            if ("NoSuchBucket".equals(code)) {
                return detail + ": bucket " + spec.bucket() + " does not exist; create it or fix the bucket of "
                        + store;
            }
            return detail + ": " + firstLine(service.getMessage());
        }
        if (e instanceof ApiCallTimeoutException) {
            return "S3 endpoint " + endpoint + " did not answer in time; check that it is reachable and not"
                    + " overloaded (" + store + ")";
        }
        Throwable refused = causeOf(
                e,
                ConnectException.class,
                ConnectTimeoutException.class,
                NoRouteToHostException.class,
                UnknownHostException.class);
        if (refused != null) {
            return "cannot connect to S3 endpoint " + endpoint + " (" + firstLine(String.valueOf(refused.getMessage()))
                    + "); check that the service is running and reachable and that " + store
                    + " names the right endpoint";
        }
        if (causeOf(e, SocketTimeoutException.class) != null) {
            return "S3 endpoint " + endpoint + " accepted the connection but sent no answer within "
                    + SOCKET_TIMEOUT.toSeconds() + " s (" + MAX_ATTEMPTS + " attempts); check that " + endpoint
                    + " is an S3 service and that " + store + " names the right endpoint";
        }
        return "S3 endpoint " + endpoint + " failed: " + firstLine(String.valueOf(e.getMessage()));
    }

    /** The first exception in {@code e}'s cause chain (itself included) of one of {@code types}, or null. */
    @SafeVarargs
    private static Throwable causeOf(Throwable e, Class<? extends Throwable>... types) {
        for (Throwable t : Causes.chain(e)) {
            for (Class<? extends Throwable> type : types) {
                if (type.isInstance(t)) {
                    return t;
                }
            }
        }
        return null;
    }

    private static String firstLine(String text) {
        int newline = text.indexOf('\n');
        return newline < 0 ? text : text.substring(0, newline);
    }
}
