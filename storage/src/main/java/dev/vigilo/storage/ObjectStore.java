package dev.vigilo.storage;

import dev.vigilo.common.errors.CancelledException;
import dev.vigilo.common.errors.UnavailableException;
import java.util.List;
import java.util.Optional;

/**
 * A store of immutable objects on the local filesystem or S3 (see {@link ObjectStores}). Datasets (their chunks and
 * catalogs) and run plans are written and read only through this interface.
 *
 * <p>Not everything Vigilo stores is an immutable object. Session logs are local files that grow by appends. The
 * checkpoint log of data generation is a Lance dataset: Lance rewrites manifests and deletes merged files, so it
 * reads and writes through its own object-store layer, not this interface. It still lives in a store of the same
 * {@link StorageConfig}: its location resolves to a configured {@link StoreSpec}, the files Vigilo manages beside
 * Lance go through clients from {@link S3Clients}, and Lance gets its S3 settings from that same spec.
 *
 * <p>Guarantees:
 * <ul>
 *   <li>Objects are create-only: once {@link #create} returns, the key holds exactly those bytes forever
 *       (no call of this interface deletes or replaces them).</li>
 *   <li>{@link #create} is atomic and durable when it returns: readers see all the bytes or no object; after a
 *       crash of the writer, the object is either absent or complete.</li>
 *   <li>Creating identical bytes at an existing key succeeds (idempotent replay); different bytes fail with
 *       {@link ObjectConflictException}. Under concurrent creates of one key, exactly one content wins.</li>
 *   <li>{@link #read} returns bytes only after checking the exact length and SHA-256 of the reference.</li>
 * </ul>
 *
 * <p>Every call takes a {@link Deadline} and honours thread interruption: it throws
 * {@link UnavailableException} or {@link CancelledException} instead of blocking past either.
 * Implementations are thread-safe.
 */
public interface ObjectStore extends ObjectReader, AutoCloseable {

    /**
     * The physical identity of this store (see {@link ObjectReader#binding()}). Two stores with the same binding
     * read and write the same objects.
     */
    @Override
    StoreBinding binding();

    /**
     * Creates the object {@code key} holding {@code bytes}, durably, unless it exists.
     *
     * @return the reference of the stored object (key, length, SHA-256 of {@code bytes})
     * @throws ObjectConflictException when the key already holds different bytes
     * @throws UnavailableException    on timeout or an unavailable store; the object may or may not exist
     *                                 afterwards, and repeating the same call is safe
     * @throws CancelledException      when the thread was interrupted; as for a timeout, repeating is safe
     */
    ObjectRef create(ObjectKey key, byte[] bytes, Deadline deadline);

    /**
     * Reads the object {@code ref} names and verifies it.
     *
     * @return the object's bytes, whose length and SHA-256 equal {@code ref}'s; the caller owns the array
     * @throws ObjectNotFoundException  when no object exists at the key
     * @throws ObjectIntegrityException when the length or digest differ
     * @throws UnavailableException     on timeout or an unavailable store
     * @throws CancelledException       when the thread was interrupted
     */
    @Override
    byte[] read(ObjectRef ref, Deadline deadline);

    /**
     * Describes the object at {@code key} without reading its bytes.
     *
     * @return the object's info, or empty when it does not exist
     */
    Optional<ObjectInfo> head(ObjectKey key, Deadline deadline);

    /**
     * Lists the objects whose keys start with {@code prefix} (plain text prefix, may be empty), in ascending key
     * order. Temporary files of unfinished creates are never listed.
     */
    List<ObjectInfo> list(String prefix, Deadline deadline);

    /** Releases connections; safe to call twice. Calls after close fail. */
    @Override
    void close();
}
