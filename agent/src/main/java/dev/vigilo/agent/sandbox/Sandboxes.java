package dev.vigilo.agent.sandbox;

import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.common.errors.UnavailableException;
import java.io.File;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Pattern;

/**
 * A worker's sandbox root (docs/formats/agent-protocol.md, "Sandboxes"): {@code <root>/<owner>/} holds one directory
 * per attempt, and {@code <root>/<owner>.lock} is held locked ({@link FileChannel#lock}) for as long as the worker
 * lives. The operating system releases the lock when the process dies however it dies, so at {@link #open} every
 * other owner whose lock can be taken is a dead worker: its directories, cgroups and containers are removed then.
 * Live workers sharing the root are never touched. The lock file is created before the directory and removed after
 * it, so a directory without a lock file is a dead worker's too.
 *
 * <p>Thread-safe. Close it when the worker stops: it removes the owner's directory and lock.
 */
public final class Sandboxes implements AutoCloseable {
    private static final Pattern OWNER = Pattern.compile("[A-Za-z0-9][A-Za-z0-9_.-]{0,99}");
    private static final Pattern UNSAFE = Pattern.compile("[^A-Za-z0-9_.-]");
    private static final String LOCK = ".lock";
    /** Tries to take the owner's own lock; see {@link #lockOwn}. */
    private static final int LOCK_TRIES = 25;

    private static final long LOCK_RETRY_MS = 40;

    private final Path root;
    private final String owner;
    private final Path mine;
    private final Path lockFile;
    private final FileChannel lockChannel;
    private final FileLock lock;
    private final Map<String, String> variables;
    private final Optional<Cgroups> cgroups;
    private final AtomicLong attempts = new AtomicLong();
    private final List<String> removed = new ArrayList<>();
    private volatile boolean closed;

    private Sandboxes(
            Path root,
            String owner,
            Path lockFile,
            FileChannel lockChannel,
            FileLock lock,
            Map<String, String> variables,
            Optional<Cgroups> cgroups) {
        this.root = root;
        this.owner = owner;
        this.mine = root.resolve(owner);
        this.lockFile = lockFile;
        this.lockChannel = lockChannel;
        this.lock = lock;
        this.variables = Map.copyOf(variables);
        this.cgroups = cgroups;
    }

    /**
     * Takes {@code root} for {@code owner} (a worker id): locks the owner's lock file, removes what dead owners left
     * (directories, cgroups with the processes still in them, podman containers) and creates the owner's directory.
     *
     * @param variables the worker's environment: its {@code PATH} is where {@code bwrap}, {@code podman} and
     *                  {@code prlimit} are looked up
     * @throws UnavailableException when the root cannot be created or locked
     */
    public static Sandboxes open(Path root, String owner, Map<String, String> variables) {
        Objects.requireNonNull(variables, "variables");
        if (!OWNER.matcher(owner).matches()) {
            throw new IllegalArgumentException("a sandbox owner is letters, digits, '_', '.' and '-': " + owner);
        }
        Path abs = root.toAbsolutePath().normalize();
        Path lockFile = abs.resolve(owner + LOCK);
        FileChannel channel = null;
        try {
            Files.createDirectories(abs);
            Locked locked = lockOwn(lockFile, owner);
            channel = locked.channel();
            FileLock lock = locked.lock();
            // Cgroups are created after the dead owners' are gone: a dead owner's could otherwise hold a name.
            Sandboxes probe = new Sandboxes(abs, owner, lockFile, channel, lock, variables, Optional.empty());
            probe.removeDead();
            Files.createDirectories(abs.resolve(owner));
            Sandboxes s = new Sandboxes(abs, owner, lockFile, channel, lock, variables, Cgroups.create(owner));
            s.removed.addAll(probe.removed);
            return s;
        } catch (IOException e) {
            closeQuietly(channel);
            throw new UnavailableException(
                    "cannot prepare the sandbox root " + abs + ": " + e.getMessage()
                            + "; check that it is on a local, writable file system (VIGILO_HOME)",
                    e);
        } catch (RuntimeException e) {
            closeQuietly(channel);
            throw e;
        }
    }

    private record Locked(FileChannel channel, FileLock lock) {}

    /**
     * Creates and locks the owner's lock file, and makes sure the locked file is the one at the path: another worker
     * starting at the same moment may take the new, still unlocked file for a dead owner's and delete it between
     * this open and this lock. A token written under the lock and read back through the path tells; on a mismatch,
     * or while such a remover holds the file, it tries again (a few times, briefly: owners are unique ids, so no
     * one else keeps it).
     */
    private static Locked lockOwn(Path lockFile, String owner) throws IOException {
        byte[] token = (owner + " " + ProcessHandle.current().pid() + " " + System.nanoTime() + "\n")
                .getBytes(StandardCharsets.US_ASCII);
        for (int tries = 0; tries < LOCK_TRIES; tries++) {
            FileChannel channel = FileChannel.open(lockFile, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
            FileLock lock;
            try {
                lock = channel.tryLock();
            } catch (OverlappingFileLockException e) {
                lock = null; // held by a worker of this very process
            }
            if (lock != null) {
                channel.truncate(0);
                channel.write(ByteBuffer.wrap(token), 0);
                if (Arrays.equals(readOrEmpty(lockFile), token)) {
                    return new Locked(channel, lock);
                }
            }
            closeQuietly(channel);
            try {
                Thread.sleep(LOCK_RETRY_MS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        throw new UnavailableException("sandbox root " + lockFile.getParent() + ": owner " + owner
                + " is locked by another process; every worker needs its own id");
    }

    private static byte[] readOrEmpty(Path file) {
        try {
            return Files.readAllBytes(file);
        } catch (IOException e) {
            return new byte[0]; // deleted under us: not our file any more
        }
    }

    /** The owner id this root was opened for. */
    public String owner() {
        return owner;
    }

    /** The owners (dead workers) whose remains {@link #open} removed. */
    public List<String> removedOwners() {
        return List.copyOf(removed);
    }

    /** The directory holding this owner's attempt directories. */
    public Path directory() {
        return mine;
    }

    /** How memory and process limits of bwrap sandboxes are enforced here: {@code cgroups} or {@code prlimit}. */
    public String limitMechanism() {
        return cgroups.isPresent() ? "cgroups" : "prlimit";
    }

    /**
     * Why runs with these settings cannot run on this worker, or empty when they can: the program their kind needs
     * ({@code bwrap}, {@code podman}) is not on the worker's PATH, or bwrap limits are asked for and neither cgroups
     * nor {@code prlimit} can enforce them, or the workdir is not a directory.
     */
    public Optional<String> problem(SandboxSettings settings) {
        if (!settings.sandboxed()) {
            return Optional.empty();
        }
        String program = settings.kind().program().orElseThrow();
        if (find(program, variables).isEmpty()) {
            return Optional.of("sandbox.kind " + settings.kind().wire() + " needs the program " + program
                    + ", which is not on this worker's PATH; install it (Debian: apt-get install "
                    + (settings.kind() == SandboxKind.BWRAP ? "bubblewrap" : "podman")
                    + ") or run the worker where it is installed");
        }
        if (settings.kind() == SandboxKind.BWRAP
                && (settings.memoryMb().isPresent() || settings.pids().isPresent())
                && cgroups.isEmpty()
                && find("prlimit", variables).isEmpty()) {
            return Optional.of("sandbox.memory_mb and sandbox.pids need writable cgroups (run the worker as root) or"
                    + " the program prlimit (util-linux), and this worker has neither");
        }
        if (settings.workdir().isPresent()
                && !Files.isDirectory(settings.workdir().get())) {
            return Optional.of("sandbox.workdir " + settings.workdir().get() + " is not a directory on this worker;"
                    + " relative paths are relative to the worker's working directory");
        }
        return Optional.empty();
    }

    /**
     * Throws what {@link #problem} finds: the worker's setup is wrong for the run (invalid input, not an outage to
     * wait out), so a chunk that needs it counts its attempt and ends failed with this message if no worker can.
     *
     * @throws InvalidInputException naming what is missing and how to install it
     */
    public void require(SandboxSettings settings) {
        problem(settings).ifPresent(p -> {
            throw new InvalidInputException(p);
        });
    }

    /**
     * A fresh attempt directory with a copy of the settings' workdir, and its cgroups when limits are asked for.
     *
     * @param label names the attempt's directory (a case id and epoch, say); cut and made file-name safe
     * @throws InvalidInputException when the directory cannot be prepared (the worker's sandbox root is unusable)
     */
    public SandboxAttempt start(SandboxSettings settings, String label) {
        if (closed) {
            throw new IllegalStateException("the sandbox root is closed");
        }
        String safe = UNSAFE.matcher(label).replaceAll("_");
        String name = attempts.incrementAndGet() + "-" + safe.substring(0, Math.min(40, safe.length()));
        Path dir = mine.resolve(name);
        Path work = dir.resolve("work");
        Path tmp = dir.resolve("tmp");
        try {
            Files.createDirectories(work);
            Files.createDirectories(tmp);
            List<Path> procs = List.of();
            if (settings.kind() == SandboxKind.BWRAP
                    && cgroups.isPresent()
                    && (settings.memoryMb().isPresent() || settings.pids().isPresent())) {
                procs = cgroups.get().attempt(name, settings.memoryMb(), settings.pids());
            }
            AttemptDirectory attempt = new AttemptDirectory(this, settings, name, dir, work, tmp, procs);
            attempt.fill();
            return attempt;
        } catch (IOException e) {
            cgroups.ifPresent(c -> c.removeAttempt(name));
            remove(dir);
            throw new InvalidInputException(
                    "cannot prepare sandbox directory " + dir + ": " + e.getMessage()
                            + "; check the space and permissions of " + root,
                    e);
        }
    }

    Optional<Cgroups> cgroups() {
        return cgroups;
    }

    void remove(Path dir) {
        try {
            Trees.delete(dir);
        } catch (IOException e) {
            // The next start of a worker on this root removes it: it is under a dead owner by then.
        }
    }

    /** {@code podman rm -f} of these containers, bounded in time. */
    void removeContainers(List<String> names) {
        List<String> argv = new ArrayList<>(List.of("podman", "rm", "-f", "-i", "-t", "0"));
        argv.addAll(names);
        quietly(argv);
    }

    /** Removes the directories, cgroups and containers of every owner whose lock is free. */
    private void removeDead() throws IOException {
        List<Path> entries;
        try (var list = Files.list(root)) {
            entries = list.toList();
        }
        for (Path e : entries) {
            String file = e.getFileName().toString();
            if (file.endsWith(LOCK)) {
                String other = file.substring(0, file.length() - LOCK.length());
                if (!other.equals(owner)) {
                    removeIfDead(other, e);
                }
            } else if (Files.isDirectory(e) && !file.equals(owner) && !Files.exists(root.resolve(file + LOCK))) {
                removeOwnerRemains(file);
            }
        }
    }

    private void removeIfDead(String other, Path otherLock) {
        try (FileChannel ch = FileChannel.open(otherLock, StandardOpenOption.WRITE)) {
            FileLock l;
            try {
                l = ch.tryLock();
            } catch (OverlappingFileLockException e) {
                return; // held by a live worker in this very process
            }
            if (l == null) {
                return; // a live worker
            }
            removeOwnerRemains(other);
            Files.deleteIfExists(otherLock);
        } catch (IOException e) {
            // Removed by another worker starting at the same time, or unreadable: the next start looks again.
        }
    }

    private void removeOwnerRemains(String other) {
        removed.add(other);
        // Processes first (they could still write into the directories), then the directories.
        Cgroups.removeDeadOwner(other);
        if (find("podman", variables).isPresent()) {
            removeContainersOf(other);
        }
        remove(root.resolve(other));
    }

    private void removeContainersOf(String other) {
        Optional<String> ids = quietly(
                List.of("podman", "ps", "-a", "-q", "--filter", "label=" + Launchers.OWNER_LABEL + "=" + other));
        ids.map(String::strip).filter(s -> !s.isEmpty()).ifPresent(s -> {
            List<String> argv = new ArrayList<>(List.of("podman", "rm", "-f", "-i", "-t", "0"));
            argv.addAll(List.of(s.split("\\s+")));
            quietly(argv);
        });
    }

    /** Runs a podman housekeeping command; its stdout, or empty when it failed or took over a minute. */
    private Optional<String> quietly(List<String> argv) {
        try {
            ProcessBuilder b = new ProcessBuilder(argv).redirectErrorStream(true);
            b.environment().clear();
            b.environment().putAll(variables);
            Process p = b.start();
            p.getOutputStream().close();
            byte[] out = p.getInputStream().readNBytes(1 << 20);
            if (!p.waitFor(60, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return Optional.empty();
            }
            return p.exitValue() == 0 ? Optional.of(new String(out, StandardCharsets.UTF_8)) : Optional.empty();
        } catch (IOException e) {
            return Optional.empty();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Optional.empty();
        }
    }

    /** {@code program} on {@code PATH} of {@code variables}, if it is there and executable. */
    public static Optional<Path> find(String program, Map<String, String> variables) {
        String path = variables.getOrDefault("PATH", "/usr/local/bin:/usr/bin:/bin");
        for (String dir : path.split(File.pathSeparator)) {
            if (dir.isEmpty()) {
                continue;
            }
            Path p = Path.of(dir, program);
            if (Files.isRegularFile(p) && Files.isExecutable(p)) {
                return Optional.of(p);
            }
        }
        return Optional.empty();
    }

    /** Removes this owner's directories and cgroups, then its lock. Attempts must have ended. Idempotent. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        cgroups.ifPresent(Cgroups::removeOwner);
        remove(mine);
        try {
            Files.deleteIfExists(lockFile);
            lock.release();
        } catch (IOException e) {
            // The lock goes with the channel below; a leftover lock file is taken as a dead owner's next time.
        }
        closeQuietly(lockChannel);
    }

    private static void closeQuietly(FileChannel channel) {
        if (channel != null) {
            try {
                channel.close();
            } catch (IOException e) {
                // Closing releases the lock; nothing else to do.
            }
        }
    }

    @Override
    public String toString() {
        return "Sandboxes[" + mine + "]";
    }
}
