package dev.vigilo.storage;

import dev.vigilo.common.crash.CrashPoints;
import dev.vigilo.common.errors.CancelledException;
import dev.vigilo.common.errors.ConflictException;
import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.common.errors.UnavailableException;
import dev.vigilo.common.errors.VigiloException;
import dev.vigilo.common.input.InputFiles;
import dev.vigilo.common.io.AtomicFiles;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedByInterruptException;
import java.nio.channels.FileChannel;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * An {@link ObjectStore} in a directory of the local filesystem: key {@code a/b/c} is the file
 * {@code root/a/b/c}.
 *
 * <p>A create writes a hidden temporary file {@code .<name>.tmp-<random>} beside the target
 * ({@link AtomicFiles#tempBeside}), forces it to disk,
 * and publishes it with a hard link. Linking, unlike renaming, fails when the target exists, so concurrent
 * writers of one key cannot overwrite each other: exactly one link wins and the others compare against it. The
 * parent directory is then forced so that the new name survives a crash. Keys never start a segment with
 * {@code .}, so temporary names cannot collide with objects, and listing skips them.
 *
 * <p>The filesystem must support hard links (every POSIX filesystem and NTFS do). Thread-safe: all state is in
 * the filesystem.
 */
final class LocalObjectStore implements ObjectStore {
    /** Bytes read or written between deadline checks. */
    private static final int CHUNK = 1 << 20;
    /** Largest byte array the JVM reliably allocates. */
    private static final long MAX_ARRAY = Integer.MAX_VALUE - 8;

    private final StoreSpec.Local spec;
    private final Path root;
    private volatile boolean closed;

    LocalObjectStore(StoreSpec.Local spec) {
        this.spec = Objects.requireNonNull(spec, "spec");
        this.root = spec.root();
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
        deadline.check(what);
        ObjectRef ref = ObjectRef.of(key, bytes);
        Path target = path(key);
        if (Files.exists(target)) {
            return compareExisting(ref, bytes, target, deadline);
        }
        Path dir = target.getParent();
        try {
            ensureDirectory(dir, key);
        } catch (IOException e) {
            throw failure("cannot create directory " + dir + " for " + key, e);
        }
        Path temp = AtomicFiles.tempBeside(target);
        try {
            CrashPoints.boundary("storage.local.write");
            writeDurably(temp, bytes, deadline, what);
            deadline.check(what);
            try {
                CrashPoints.boundary("storage.local.link");
                Files.createLink(target, temp);
            } catch (FileAlreadyExistsException raced) {
                // Another writer published first; the outcome is whatever it wrote.
                return compareExisting(ref, bytes, target, deadline);
            }
            // The object is published; from here on the call succeeds even if the deadline passes.
            CrashPoints.boundary("storage.local.published");
            Files.delete(temp);
            AtomicFiles.fsyncDirectory(dir);
            return ref;
        } catch (UnsupportedOperationException e) {
            throw new UnavailableException(
                    "local store " + root + " needs hard links, which its filesystem does not support", e);
        } catch (IOException e) {
            throw failure("cannot write " + target, e);
        } finally {
            deleteQuietly(temp);
        }
    }

    @Override
    public byte[] read(ObjectRef ref, Deadline deadline) {
        Objects.requireNonNull(ref, "ref");
        Objects.requireNonNull(deadline, "deadline");
        checkOpen();
        String what = "read " + ref.key() + " from " + binding();
        deadline.check(what);
        Path file = path(ref.key());
        if (!isRegularFile(file)) {
            throw new ObjectNotFoundException(ref.key());
        }
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
            long size = channel.size();
            // Compare the size before reading so a wrong reference never pulls a huge file into memory.
            if (size != ref.length()) {
                throw new ObjectIntegrityException(ref.key(), "length is " + size + ", expected " + ref.length());
            }
            byte[] bytes = readFully(channel, ref.key(), size, deadline, what);
            Sha256 actual = Sha256.of(bytes);
            if (!actual.equals(ref.sha256())) {
                throw new ObjectIntegrityException(ref.key(), "SHA-256 is " + actual + ", expected " + ref.sha256());
            }
            return bytes;
        } catch (NoSuchFileException e) {
            throw new ObjectNotFoundException(ref.key());
        } catch (IOException e) {
            throw failure("cannot read " + file, e);
        }
    }

    @Override
    public byte[] readSlice(ObjectRef slice, long offset, Deadline deadline) {
        Objects.requireNonNull(slice, "slice");
        Objects.requireNonNull(deadline, "deadline");
        if (offset < 0) {
            throw new IllegalArgumentException("offset must be >= 0, got " + offset);
        }
        checkOpen();
        String what = "read " + slice.length() + " bytes at " + offset + " of " + slice.key() + " from " + binding();
        deadline.check(what);
        Path file = path(slice.key());
        if (!isRegularFile(file)) {
            throw new ObjectNotFoundException(slice.key());
        }
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
            long size = channel.size();
            long available = Math.max(0, Math.min(slice.length(), size - offset));
            channel.position(Math.min(offset, size));
            byte[] bytes = readFully(channel, slice.key(), available, deadline, what);
            return ObjectReader.verifiedSlice(slice, offset, bytes);
        } catch (NoSuchFileException e) {
            throw new ObjectNotFoundException(slice.key());
        } catch (IOException e) {
            throw failure("cannot read " + file, e);
        }
    }

    @Override
    public Optional<ObjectInfo> head(ObjectKey key, Deadline deadline) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(deadline, "deadline");
        checkOpen();
        deadline.check("head " + key + " in " + binding());
        Path file = path(key);
        try {
            BasicFileAttributes attrs = Files.readAttributes(file, BasicFileAttributes.class);
            // A directory at the key's path holds other objects; it is not an object itself.
            return attrs.isRegularFile()
                    ? Optional.of(new ObjectInfo(key, attrs.size(), Optional.empty()))
                    : Optional.empty();
        } catch (NoSuchFileException e) {
            return Optional.empty();
        } catch (IOException e) {
            throw failure("cannot inspect " + file, e);
        }
    }

    @Override
    public List<ObjectInfo> list(String prefix, Deadline deadline) {
        Objects.requireNonNull(prefix, "prefix");
        Objects.requireNonNull(deadline, "deadline");
        checkOpen();
        String what = "list " + binding() + " prefix \"" + prefix + "\"";
        deadline.check(what);
        if (!Files.isDirectory(root)) {
            return List.of();
        }
        List<ObjectInfo> found = new ArrayList<>();
        try {
            Files.walkFileTree(root, new SimpleFileVisitor<>() {
                @Override
                public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs) {
                    deadline.check(what);
                    if (dir.equals(root)) {
                        return FileVisitResult.CONTINUE;
                    }
                    String relative = relative(dir) + "/";
                    boolean mayMatch = prefix.startsWith(relative) || relative.startsWith(prefix);
                    return isHidden(dir) || !mayMatch ? FileVisitResult.SKIP_SUBTREE : FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) {
                    if (attrs.isRegularFile() && !isHidden(file)) {
                        String relative = relative(file);
                        if (relative.startsWith(prefix)) {
                            keyOf(relative)
                                    .ifPresent(key -> found.add(new ObjectInfo(key, attrs.size(), Optional.empty())));
                        }
                    }
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult visitFileFailed(Path file, IOException e) throws IOException {
                    if (e instanceof NoSuchFileException) {
                        return FileVisitResult.CONTINUE; // a temp file deleted while we walked
                    }
                    throw e;
                }
            });
        } catch (IOException e) {
            throw failure("cannot list " + root, e);
        }
        found.sort(Comparator.comparing(ObjectInfo::key));
        return List.copyOf(found);
    }

    @Override
    public void close() {
        closed = true;
    }

    @Override
    public String toString() {
        return "LocalObjectStore[" + root + "]";
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("object store " + binding() + " is closed");
        }
    }

    private Path path(ObjectKey key) {
        Path path = root;
        for (String segment : key.value().split("/")) {
            path = path.resolve(segment);
        }
        return path;
    }

    private String relative(Path path) {
        StringBuilder key = new StringBuilder();
        for (Path name : root.relativize(path)) {
            if (key.length() > 0) {
                key.append('/');
            }
            key.append(name);
        }
        return key.toString();
    }

    private static boolean isHidden(Path path) {
        Path name = path.getFileName();
        return name != null && name.toString().startsWith(".");
    }

    /** Files under the root whose names are not valid keys were not written by a store; skip them. */
    private static Optional<ObjectKey> keyOf(String relative) {
        try {
            return Optional.of(new ObjectKey(relative));
        } catch (IllegalArgumentException e) {
            return Optional.empty();
        }
    }

    private static boolean isRegularFile(Path file) {
        try {
            return Files.readAttributes(file, BasicFileAttributes.class).isRegularFile();
        } catch (IOException e) {
            return false;
        }
    }

    /**
     * Resolves a create that found its key taken: identical bytes make it an idempotent success, anything else
     * a conflict.
     */
    private ObjectRef compareExisting(ObjectRef ref, byte[] bytes, Path target, Deadline deadline) {
        String what = "compare " + ref.key() + " in " + binding();
        deadline.check(what);
        if (!isRegularFile(target)) {
            throw new ConflictException("cannot create " + ref.key() + " in " + binding() + ": " + target
                    + " is a directory holding other objects");
        }
        try (FileChannel channel = FileChannel.open(target, StandardOpenOption.READ)) {
            long size = channel.size();
            if (size != bytes.length) {
                throw new ObjectConflictException(ref.key(), "stored length " + size + ", new length " + bytes.length);
            }
            byte[] existing = readFully(channel, ref.key(), size, deadline, what);
            if (!MessageDigest.isEqual(existing, bytes)) {
                throw new ObjectConflictException(
                        ref.key(), "stored SHA-256 " + Sha256.of(existing) + ", new SHA-256 " + ref.sha256());
            }
            // The first writer may have crashed between linking and forcing the directory; replaying the
            // create must leave the object as durable as a first create would.
            AtomicFiles.fsyncDirectory(target.getParent());
            return ref;
        } catch (IOException e) {
            throw failure("cannot read existing " + target, e);
        }
    }

    private static byte[] readFully(FileChannel channel, ObjectKey key, long size, Deadline deadline, String what)
            throws IOException {
        if (size > MAX_ARRAY) {
            throw new InvalidInputException("object " + key + " has " + size + " bytes, too many to read into memory");
        }
        ByteBuffer buffer = ByteBuffer.allocate((int) size);
        while (buffer.hasRemaining()) {
            deadline.check(what);
            buffer.limit(Math.min(buffer.capacity(), buffer.position() + CHUNK));
            if (channel.read(buffer) < 0) {
                throw new ObjectIntegrityException(
                        key, "file ended after " + buffer.position() + " of " + size + " bytes");
            }
            buffer.limit(buffer.capacity());
        }
        return buffer.array();
    }

    private static void writeDurably(Path temp, byte[] bytes, Deadline deadline, String what) throws IOException {
        try (FileChannel channel = FileChannel.open(temp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            ByteBuffer buffer = ByteBuffer.wrap(bytes);
            while (buffer.hasRemaining()) {
                deadline.check(what);
                buffer.limit(Math.min(bytes.length, buffer.position() + CHUNK));
                channel.write(buffer);
                buffer.limit(bytes.length);
            }
            channel.force(true);
        }
    }

    /** Creates {@code dir} and missing ancestors, forcing each new entry into its parent directory. */
    private void ensureDirectory(Path dir, ObjectKey key) throws IOException {
        if (Files.isDirectory(dir)) {
            return;
        }
        if (dir.equals(root)) {
            // The root is configuration, not an object: something else there is a configuration error.
            Optional<String> problem = InputFiles.directoryProblem(root);
            if (problem.isPresent()) {
                throw new InvalidInputException("local store " + binding() + ": its root " + root + " " + problem.get()
                        + "; point the store's root at a directory");
            }
        }
        Path parent = dir.getParent();
        if (parent != null) {
            ensureDirectory(parent, key);
        }
        try {
            Files.createDirectory(dir);
        } catch (FileAlreadyExistsException e) {
            if (Files.isDirectory(dir)) {
                return; // created concurrently
            }
            throw new ConflictException(
                    "cannot create " + key + " in " + binding() + ": " + dir
                            + " is an object, so it cannot hold other objects",
                    e);
        }
        if (parent != null) {
            AtomicFiles.fsyncDirectory(parent);
        }
    }

    private static void deleteQuietly(Path temp) {
        try {
            Files.deleteIfExists(temp);
        } catch (IOException e) {
            // A leftover temp file is harmless: it is hidden from listing and never read.
        }
    }

    private static VigiloException failure(String message, IOException e) {
        if (e instanceof ClosedByInterruptException) {
            // NIO closed the channel because the thread was interrupted; the interrupt flag is still set.
            return new CancelledException(message + ": interrupted", e);
        }
        return new UnavailableException(message + ": " + reason(e), e);
    }

    /** What went wrong, in words (not an exception class name); the file when the JDK names one. */
    private static String reason(IOException e) {
        if (e instanceof java.nio.file.AccessDeniedException denied) {
            return "permission denied on " + denied.getFile() + "; check the store directory's permissions";
        }
        if (e instanceof java.nio.file.FileSystemException fs && fs.getReason() != null) {
            return fs.getReason() + (fs.getFile() == null ? "" : " (" + fs.getFile() + ")");
        }
        return e.getMessage() != null ? e.getMessage() : e.getClass().getSimpleName();
    }
}
