package dev.vigilo.storage;

import dev.vigilo.common.concurrent.Futures;
import dev.vigilo.common.concurrent.Threads;
import dev.vigilo.common.crash.CrashPoints;
import dev.vigilo.common.errors.CancelledException;
import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.common.errors.UnavailableException;
import dev.vigilo.common.errors.VigiloException;
import dev.vigilo.common.retry.RetryPolicy;
import java.io.IOException;
import java.nio.channels.ClosedByInterruptException;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;
import software.amazon.awssdk.awscore.AwsRequestOverrideConfiguration;
import software.amazon.awssdk.awscore.exception.AwsServiceException;
import software.amazon.awssdk.core.exception.AbortedException;
import software.amazon.awssdk.core.exception.ApiCallTimeoutException;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.core.sync.ResponseTransformer;
import software.amazon.awssdk.http.AbortableInputStream;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.ChecksumMode;
import software.amazon.awssdk.services.s3.model.ChecksumType;
import software.amazon.awssdk.services.s3.model.GetObjectResponse;
import software.amazon.awssdk.services.s3.model.HeadObjectResponse;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Response;
import software.amazon.awssdk.services.s3.model.NoSuchKeyException;
import software.amazon.awssdk.services.s3.model.S3Exception;
import software.amazon.awssdk.services.s3.model.S3Object;

/**
 * An {@link ObjectStore} in an S3 bucket, under an optional key prefix: key {@code k} is the S3 key
 * {@code prefix/k}.
 *
 * <p>A create is one conditional PUT ({@code If-None-Match: *}) carrying the SHA-256 of the bytes, so S3 rejects
 * corrupted uploads and never replaces an existing object. When the key is taken (412), the existing object is
 * read and compared: identical bytes make the create an idempotent success. The SDK client comes from
 * {@link S3Clients} (credentials from the AWS SDK's default provider chain, bounded connect and read timeouts).
 *
 * <p>Every request carries the time left on the caller's {@link Deadline} as its SDK call timeout, and runs on a
 * worker thread of this store while the caller waits, because a sync SDK call blocked on the network does not
 * notice interrupts. Thread-safe (the SDK client is).
 */
final class S3ObjectStore implements ObjectStore {
    /** Largest byte array the JVM reliably allocates. */
    private static final long MAX_ARRAY = Integer.MAX_VALUE - 8;
    /** The SDK rejects a zero timeout; a deadline checked a moment ago may have only nanoseconds left. */
    private static final Duration MIN_CALL_TIMEOUT = Duration.ofMillis(1);

    private static final Duration MAX_CONFLICT_BACKOFF = Duration.ofSeconds(1);
    /** How long past the deadline to wait for an SDK call before giving up on its own call timeout. */
    private static final Duration CALL_GRACE = Duration.ofSeconds(2);
    /** Bounds the PUT retries caused by concurrent writers (409) even under a generous deadline. */
    private static final int MAX_CREATE_ATTEMPTS = 10;
    /**
     * Retries of a create whose key is contended: doubling waits from 40 ms up to {@link #MAX_CONFLICT_BACKOFF}
     * (with jitter, so racing writers spread out), never past the create's deadline.
     */
    private static final RetryPolicy CONTENDED = new RetryPolicy(
            MAX_CREATE_ATTEMPTS, Duration.ofMillis(40), MAX_CONFLICT_BACKOFF, e -> e instanceof KeyContended);

    private final StoreSpec.S3 spec;
    private final S3Client client;
    /** Runs each SDK call, so that the caller can stop waiting when interrupted; see {@link #call}. */
    private final ExecutorService calls;

    private volatile boolean closed;

    S3ObjectStore(StoreSpec.S3 spec) {
        this.spec = Objects.requireNonNull(spec, "spec");
        this.client = S3Clients.open(spec);
        // Daemon threads: an abandoned call must not keep the JVM alive.
        this.calls = Executors.newCachedThreadPool(Threads.daemonFactory("s3-" + spec.bucket()));
    }

    @Override
    public StoreBinding binding() {
        return spec.binding();
    }

    @Override
    public ObjectRef create(ObjectKey key, byte[] bytes, Deadline deadline) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(bytes, "bytes");
        Objects.requireNonNull(deadline, "deadline");
        checkOpen();
        String what = "create " + key + " in " + binding();
        ObjectRef ref = ObjectRef.of(key, bytes);
        String checksum = ref.sha256().toBase64();
        return CONTENDED.run(attempt -> createOnce(key, bytes, deadline, what, ref, checksum), deadline::remaining);
    }

    /** One conditional PUT of a create; {@link KeyContended} when another write of the key is in the way. */
    private ObjectRef createOnce(
            ObjectKey key, byte[] bytes, Deadline deadline, String what, ObjectRef ref, String checksum) {
        deadline.check(what);
        try {
            CrashPoints.boundary("storage.s3.put");
            call(
                    what,
                    deadline,
                    () -> client.putObject(
                            b -> b.bucket(spec.bucket())
                                    .key(s3Key(key))
                                    .ifNoneMatch("*")
                                    .checksumSHA256(checksum)
                                    .contentLength((long) bytes.length)
                                    .overrideConfiguration(timeout(deadline)),
                            RequestBody.fromBytes(bytes)));
            return ref;
        } catch (S3Exception e) {
            if (e.statusCode() == 412) {
                Optional<ObjectRef> settled = compareExisting(ref, bytes, deadline);
                if (settled.isPresent()) {
                    return settled.get();
                }
                throw new KeyContended(what); // the object vanished between the PUT and the GET: try again
            }
            if (e.statusCode() == 409) {
                // ConditionalRequestConflict: a concurrent conditional write of this key is in flight. Wait
                // for it to land; the next attempt then gets 412 and compares.
                throw new KeyContended(what);
            }
            if ("BadDigest".equals(errorCode(e))) {
                throw new UnavailableException(
                        what + " failed: the bytes S3 received do not match"
                                + " their SHA-256 (corrupted in transit); nothing was stored, retrying may help",
                        e);
            }
            throw failure(what, e);
        } catch (SdkException e) {
            throw failure(what, e);
        }
    }

    @Override
    public byte[] read(ObjectRef ref, Deadline deadline) {
        Objects.requireNonNull(ref, "ref");
        Objects.requireNonNull(deadline, "deadline");
        checkOpen();
        Body body = get(ref.key(), ref.length(), deadline, "read " + ref.key() + " from " + binding())
                .orElseThrow(() -> new ObjectNotFoundException(ref.key()));
        if (body.bytes().isEmpty()) {
            throw new ObjectIntegrityException(ref.key(), "length is " + body.length() + ", expected " + ref.length());
        }
        byte[] bytes = body.bytes().get();
        Sha256 actual = Sha256.of(bytes);
        if (!actual.equals(ref.sha256())) {
            throw new ObjectIntegrityException(ref.key(), "SHA-256 is " + actual + ", expected " + ref.sha256());
        }
        return bytes;
    }

    @Override
    public byte[] readSlice(ObjectRef slice, long offset, Deadline deadline) {
        Objects.requireNonNull(slice, "slice");
        Objects.requireNonNull(deadline, "deadline");
        if (offset < 0) {
            throw new IllegalArgumentException("offset must be >= 0, got " + offset);
        }
        checkOpen();
        if (slice.length() == 0) {
            return ObjectReader.verifiedSlice(slice, offset, new byte[0]); // no range names zero bytes
        }
        Body body = get(
                        slice.key(),
                        offset,
                        slice.length(),
                        deadline,
                        "read " + slice.length() + " bytes at " + offset + " of " + slice.key() + " from " + binding())
                .orElseThrow(() -> new ObjectNotFoundException(slice.key()));
        if (body.bytes().isEmpty()) {
            throw new ObjectIntegrityException(
                    slice.key(),
                    "the object ends " + body.length() + " bytes into the slice at offset " + offset + ", expected "
                            + slice.length());
        }
        return ObjectReader.verifiedSlice(slice, offset, body.bytes().get());
    }

    @Override
    public Optional<ObjectInfo> head(ObjectKey key, Deadline deadline) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(deadline, "deadline");
        checkOpen();
        String what = "head " + key + " in " + binding();
        deadline.check(what);
        try {
            HeadObjectResponse response = call(
                    what,
                    deadline,
                    () -> client.headObject(b -> b.bucket(spec.bucket())
                            .key(s3Key(key))
                            .checksumMode(ChecksumMode.ENABLED)
                            .overrideConfiguration(timeout(deadline))));
            return Optional.of(new ObjectInfo(key, response.contentLength(), fullObjectSha256(response)));
        } catch (NoSuchKeyException e) {
            return Optional.empty();
        } catch (S3Exception e) {
            if (e.statusCode() == 404) {
                return Optional.empty();
            }
            throw failure(what, e);
        } catch (SdkException e) {
            throw failure(what, e);
        }
    }

    @Override
    public List<ObjectInfo> list(String prefix, Deadline deadline) {
        Objects.requireNonNull(prefix, "prefix");
        Objects.requireNonNull(deadline, "deadline");
        checkOpen();
        String what = "list " + binding() + " prefix \"" + prefix + "\"";
        String storePrefix = spec.prefix().isEmpty() ? "" : spec.prefix() + "/";
        List<ObjectInfo> found = new ArrayList<>();
        // Pages are fetched one by one rather than through the SDK paginator so that each request gets the
        // time left on the deadline, not the time left when the listing started.
        String token = null;
        do {
            deadline.check(what);
            String continuation = token;
            ListObjectsV2Response page;
            try {
                page = call(
                        what,
                        deadline,
                        () -> client.listObjectsV2(b -> b.bucket(spec.bucket())
                                .prefix(storePrefix + prefix)
                                .continuationToken(continuation)
                                .overrideConfiguration(timeout(deadline))));
            } catch (SdkException e) {
                throw failure(what, e);
            }
            for (S3Object object : page.contents()) {
                if (object.key().startsWith(storePrefix)) {
                    keyOf(object.key().substring(storePrefix.length()))
                            .ifPresent(key -> found.add(new ObjectInfo(key, object.size(), Optional.empty())));
                }
            }
            token = Boolean.TRUE.equals(page.isTruncated()) ? page.nextContinuationToken() : null;
        } while (token != null);
        // S3 sorts by UTF-8 bytes; keys are ASCII so that is key order already, but do not rely on every
        // S3-compatible service getting it right.
        found.sort(Comparator.comparing(ObjectInfo::key));
        return List.copyOf(found);
    }

    @Override
    public void close() {
        if (!closed) {
            closed = true;
            calls.shutdownNow();
            client.close();
        }
    }

    @Override
    public String toString() {
        return "S3ObjectStore[" + binding() + "]";
    }

    /** What a GET found: the body when its length was the expected one, otherwise only the length. */
    private record Body(long length, Optional<byte[]> bytes) {}

    /**
     * GETs {@code key}, reading the body only when its length is {@code expectedLength}.
     *
     * @return empty when the object does not exist
     */
    private Optional<Body> get(ObjectKey key, long expectedLength, Deadline deadline, String what) {
        return get(key, -1, expectedLength, deadline, what);
    }

    /**
     * GETs {@code expectedLength} bytes at {@code offset} of {@code key} (the whole object when {@code offset} is
     * negative), reading the body only when its length is {@code expectedLength}.
     *
     * @return empty when the object does not exist
     */
    private Optional<Body> get(ObjectKey key, long offset, long expectedLength, Deadline deadline, String what) {
        deadline.check(what);
        if (expectedLength > MAX_ARRAY) {
            throw new InvalidInputException(
                    "object " + key + " has " + expectedLength + " bytes, too many to read into memory");
        }
        // The transformer runs inside the API call, so the call timeout also bounds reading the body.
        ResponseTransformer<GetObjectResponse, Body> readIfExpected =
                (response, in) -> readBody(response, in, expectedLength);
        try {
            return Optional.of(call(
                    what,
                    deadline,
                    () -> client.getObject(
                            b -> {
                                b.bucket(spec.bucket()).key(s3Key(key)).overrideConfiguration(timeout(deadline));
                                if (offset >= 0) {
                                    b.range("bytes=" + offset + "-" + (offset + expectedLength - 1));
                                }
                            },
                            readIfExpected)));
        } catch (NoSuchKeyException e) {
            return Optional.empty();
        } catch (S3Exception e) {
            if ("NoSuchKey".equals(errorCode(e))) {
                return Optional.empty();
            }
            if (offset >= 0 && e.statusCode() == 416) {
                return Optional.of(new Body(0, Optional.empty())); // the object ends before the slice starts
            }
            throw failure(what, e);
        } catch (SdkException e) {
            throw failure(what, e);
        }
    }

    private static Body readBody(GetObjectResponse response, AbortableInputStream in, long expectedLength)
            throws IOException {
        Long contentLength = response.contentLength();
        if (contentLength != null && contentLength != expectedLength) {
            // Abort rather than close: closing would drain a possibly huge body to reuse the connection.
            in.abort();
            return new Body(contentLength, Optional.empty());
        }
        // One byte more than expected tells a longer body apart when the service sent no Content-Length.
        byte[] bytes = in.readNBytes((int) Math.min(expectedLength + 1, MAX_ARRAY));
        if (bytes.length != expectedLength) {
            in.abort();
            return new Body(bytes.length, Optional.empty());
        }
        return new Body(bytes.length, Optional.of(bytes));
    }

    /**
     * Resolves a create whose key was taken: identical bytes settle it as an idempotent success, different bytes
     * as a conflict.
     *
     * @return the reference, or empty when the object no longer exists
     */
    private Optional<ObjectRef> compareExisting(ObjectRef ref, byte[] bytes, Deadline deadline) {
        Optional<Body> existing = get(ref.key(), bytes.length, deadline, "compare " + ref.key() + " in " + binding());
        if (existing.isEmpty()) {
            return Optional.empty();
        }
        Body body = existing.get();
        if (body.bytes().isEmpty()) {
            throw new ObjectConflictException(
                    ref.key(), "stored length " + body.length() + ", new length " + bytes.length);
        }
        byte[] stored = body.bytes().get();
        if (!MessageDigest.isEqual(stored, bytes)) {
            throw new ObjectConflictException(
                    ref.key(), "stored SHA-256 " + Sha256.of(stored) + ", new SHA-256 " + ref.sha256());
        }
        return Optional.of(ref);
    }

    /**
     * The SHA-256 S3 reports for the whole object. Multipart uploads report a composite checksum (a digest of
     * part digests, rendered {@code <base64>-<parts>}), which is not the digest of the bytes, so it is ignored.
     */
    private static Optional<Sha256> fullObjectSha256(HeadObjectResponse response) {
        String value = response.checksumSHA256();
        if (value == null || value.contains("-") || response.checksumType() == ChecksumType.COMPOSITE) {
            return Optional.empty();
        }
        try {
            return Optional.of(Sha256.ofDigest(Base64.getDecoder().decode(value)));
        } catch (IllegalArgumentException e) {
            return Optional.empty();
        }
    }

    private static Optional<ObjectKey> keyOf(String text) {
        try {
            return Optional.of(new ObjectKey(text));
        } catch (IllegalArgumentException e) {
            return Optional.empty(); // not written through an ObjectStore
        }
    }

    private String s3Key(ObjectKey key) {
        return spec.prefix().isEmpty() ? key.value() : spec.prefix() + "/" + key.value();
    }

    /**
     * Runs one SDK call on a worker thread and waits for it. A sync SDK call blocked in socket I/O ignores
     * {@link Thread#interrupt()}; waiting on a future does not, so an interrupted caller returns at once. The
     * abandoned request then ends by itself at the deadline, through the call timeout every request carries.
     * SDK exceptions are rethrown as they are, for the caller to map.
     */
    private <T> T call(String what, Deadline deadline, Supplier<T> request) {
        deadline.check(what);
        Future<T> future;
        try {
            future = calls.submit(request::get);
        } catch (RejectedExecutionException e) {
            throw new IllegalStateException("object store " + binding() + " is closed", e);
        }
        try {
            return future.get(deadline.remaining().plus(CALL_GRACE).toNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            future.cancel(true);
            Thread.currentThread().interrupt();
            throw new CancelledException(what + " was cancelled", e);
        } catch (TimeoutException e) {
            // Only reached when the SDK overran its own call timeout.
            future.cancel(true);
            throw new UnavailableException(
                    what + " ran past its deadline: S3 endpoint " + S3Clients.endpointText(spec)
                            + " did not answer in time; check that it is reachable (store \"" + spec.name() + "\")",
                    e);
        } catch (ExecutionException e) {
            RuntimeException failure =
                    Futures.unwrap(e, cause -> new UnavailableException(what + " failed: " + cause, cause));
            failure.addSuppressed(new Exception("rethrown by the thread that called " + what));
            throw failure;
        }
    }

    private static AwsRequestOverrideConfiguration timeout(Deadline deadline) {
        Duration left = deadline.remaining();
        return AwsRequestOverrideConfiguration.builder()
                .apiCallTimeout(left.compareTo(MIN_CALL_TIMEOUT) < 0 ? MIN_CALL_TIMEOUT : left)
                .build();
    }

    /** A create that another write of the same key got in the way of; retried by {@link #CONTENDED}. */
    private static final class KeyContended extends UnavailableException {
        KeyContended(String what) {
            super(what + " failed: the key stayed contended for " + MAX_CREATE_ATTEMPTS + " attempts");
        }
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("object store " + binding() + " is closed");
        }
    }

    private static String errorCode(AwsServiceException e) {
        return e.awsErrorDetails() == null ? null : e.awsErrorDetails().errorCode();
    }

    private VigiloException failure(String what, SdkException e) {
        if (e instanceof ApiCallTimeoutException) {
            return new UnavailableException(what + " ran past its deadline: " + S3Clients.explain(spec, e), e);
        }
        if (e instanceof AbortedException || Thread.currentThread().isInterrupted() || interruptedCause(e)) {
            // The SDK may have consumed the interrupt while aborting the request; the caller must still see it.
            Thread.currentThread().interrupt();
            return new CancelledException(what + " was cancelled", e);
        }
        return new UnavailableException(what + " failed: " + S3Clients.explain(spec, e), e);
    }

    private static boolean interruptedCause(Throwable e) {
        for (Throwable t = e.getCause(); t != null; t = t.getCause()) {
            if (t instanceof InterruptedException || t instanceof ClosedByInterruptException) {
                return true;
            }
        }
        return false;
    }
}
