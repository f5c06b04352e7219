package dev.vigilo.checkpoint;

import dev.vigilo.common.crash.CrashPoints;
import dev.vigilo.common.errors.UnavailableException;
import dev.vigilo.storage.S3Clients;
import dev.vigilo.storage.StoreSpec;
import java.util.Optional;
import software.amazon.awssdk.core.ResponseBytes;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.GetObjectResponse;
import software.amazon.awssdk.services.s3.model.NoSuchKeyException;
import software.amazon.awssdk.services.s3.model.S3Exception;

/**
 * Compare-and-set of small S3 objects by ETag, the one place Vigilo's conditional PUTs live: a create-only PUT
 * ({@code If-None-Match: *}) or an overwrite of exactly the version read ({@code If-Match: <ETag>}); a failed
 * condition (412, or 409 for a concurrent conditional write) is an empty answer, anything else {@link
 * UnavailableException}. Used by {@link S3Lease} and {@link ExperimentRecords}. Thread-safe (the S3 client is).
 */
final class S3Conditional {
    /** An object's bytes and the ETag they were read with. */
    record Stored(byte[] bytes, String etag) {}

    private final S3Client client;
    private final StoreSpec.S3 store;
    private final String what;

    /** {@code what} names the objects in messages (e.g. "maintenance lease"). */
    S3Conditional(S3Client client, StoreSpec.S3 store, String what) {
        this.client = client;
        this.store = store;
        this.what = what;
    }

    String bucket() {
        return store.bucket();
    }

    /** The object at {@code key}, empty if there is none. */
    Optional<Stored> get(String key) {
        try {
            ResponseBytes<GetObjectResponse> r =
                    client.getObjectAsBytes(b -> b.bucket(store.bucket()).key(key));
            return Optional.of(new Stored(r.asByteArray(), r.response().eTag()));
        } catch (NoSuchKeyException e) {
            return Optional.empty();
        } catch (SdkException e) {
            throw new UnavailableException(
                    "cannot read " + what + " " + uri(key) + ": " + S3Clients.explain(store, e), e);
        }
    }

    /**
     * Writes {@code body} at {@code key} if the object's ETag is {@code ifMatch} (null: if there is no object); the
     * new ETag, empty when the condition failed.
     */
    Optional<String> put(String key, String ifMatch, byte[] body) {
        CrashPoints.boundary("checkpoint.s3-conditional-put");
        try {
            String tag = client.putObject(
                            b -> {
                                b.bucket(store.bucket()).key(key).contentType("application/json");
                                if (ifMatch == null) {
                                    b.ifNoneMatch("*");
                                } else {
                                    b.ifMatch(ifMatch);
                                }
                            },
                            RequestBody.fromBytes(body))
                    .eTag();
            return Optional.of(tag);
        } catch (S3Exception e) {
            // 412: the condition failed (someone else wrote the object); 409: a concurrent conditional write.
            if (e.statusCode() == 412 || e.statusCode() == 409) {
                return Optional.empty();
            }
            throw new UnavailableException(
                    "cannot write " + what + " " + uri(key) + ": " + S3Clients.explain(store, e), e);
        } catch (SdkException e) {
            throw new UnavailableException(
                    "cannot write " + what + " " + uri(key) + ": " + S3Clients.explain(store, e), e);
        }
    }

    /** Closes the S3 client. */
    void close() {
        client.close();
    }

    String uri(String key) {
        return "s3://" + store.bucket() + "/" + key;
    }
}
