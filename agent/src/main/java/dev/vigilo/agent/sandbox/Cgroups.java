package dev.vigilo.agent.sandbox;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The memory and process limits of bwrap sandboxes, through cgroups when this process may create them (bwrap has no
 * limits of its own): cgroup v1 with the {@code pids} and {@code memory} controllers mounted under
 * {@code /sys/fs/cgroup/<controller>}, or cgroup v2 with both controllers delegable from the root. Each worker owns
 * {@code vigilo-sandbox/<owner>} in each hierarchy and each attempt a child of it; killing every process of a cgroup
 * is how an attempt's, or a dead worker's, leftovers are ended, whatever they did to leave their process tree.
 * Cgroups are preferred to {@code prlimit} because {@code RLIMIT_NPROC} counts per user (and does not hold for root)
 * and {@code RLIMIT_AS} counts address space, not memory.
 */
final class Cgroups {
    private static final Path SYS = Path.of("/sys/fs/cgroup");
    static final String TOP = "vigilo-sandbox";
    /** Rounds of killing what a cgroup holds before giving up on removing it. */
    private static final int KILL_ROUNDS = 50;
    /** How long one round waits for each killed process to be gone. */
    private static final long EXIT_WAIT_MS = 2_000;

    /** The owner directories, one per hierarchy (v1: pids, then memory; v2: one). */
    private final List<Path> owners;

    private final boolean v2;

    private Cgroups(List<Path> owners, boolean v2) {
        this.owners = List.copyOf(owners);
        this.v2 = v2;
    }

    /** This owner's cgroups, created; empty when this process cannot create them (then prlimit is used). */
    static Optional<Cgroups> create(String owner) {
        try {
            if (Files.isRegularFile(SYS.resolve("cgroup.controllers"))) {
                String controllers = Files.readString(SYS.resolve("cgroup.controllers"));
                if (!controllers.contains("pids") || !controllers.contains("memory")) {
                    return Optional.empty();
                }
                Path top = SYS.resolve(TOP);
                write(SYS.resolve("cgroup.subtree_control"), "+pids +memory");
                Files.createDirectories(top);
                write(top.resolve("cgroup.subtree_control"), "+pids +memory");
                Path mine = top.resolve(owner);
                Files.createDirectories(mine);
                write(mine.resolve("cgroup.subtree_control"), "+pids +memory");
                return Optional.of(new Cgroups(List.of(mine), true));
            }
            List<Path> owners = new ArrayList<>();
            for (String controller : List.of("pids", "memory")) {
                Path root = SYS.resolve(controller);
                if (!Files.isRegularFile(root.resolve("cgroup.procs"))) {
                    return Optional.empty();
                }
                Path mine = root.resolve(TOP).resolve(owner);
                Files.createDirectories(mine);
                owners.add(mine);
            }
            return Optional.of(new Cgroups(owners, false));
        } catch (IOException | RuntimeException e) {
            // Not root, a read-only /sys, controllers not delegated: the documented fallback is prlimit.
            return Optional.empty();
        }
    }

    /**
     * A new cgroup per hierarchy for one attempt with these limits.
     *
     * @return the {@code cgroup.procs} files the attempt's first process writes its pid to
     */
    List<Path> attempt(String name, Optional<Long> memoryMb, Optional<Integer> pids) throws IOException {
        List<Path> procs = new ArrayList<>();
        for (int i = 0; i < owners.size(); i++) {
            Path dir = owners.get(i).resolve(name);
            Files.createDirectories(dir);
            boolean pidsHere = v2 || i == 0;
            boolean memoryHere = v2 || i == 1;
            if (pidsHere && pids.isPresent()) {
                write(dir.resolve("pids.max"), Long.toString(pids.get()));
            }
            if (memoryHere && memoryMb.isPresent()) {
                long bytes = memoryMb.get() << 20;
                write(dir.resolve(v2 ? "memory.max" : "memory.limit_in_bytes"), Long.toString(bytes));
                // Without swap accounting the limit is on memory alone; where it exists, swap counts too, so a
                // process cannot page its way past the limit.
                Path swap = dir.resolve(v2 ? "memory.swap.max" : "memory.memsw.limit_in_bytes");
                if (Files.exists(swap)) {
                    try {
                        write(swap, v2 ? "0" : Long.toString(bytes));
                    } catch (IOException e) {
                        // Not enabled on this kernel: the memory limit alone holds.
                    }
                }
            }
            procs.add(dir.resolve("cgroup.procs"));
        }
        return procs;
    }

    /** Kills every process of the attempt's cgroups and removes them. */
    void removeAttempt(String name) {
        for (Path owner : owners) {
            killAndRemove(owner.resolve(name));
        }
    }

    /** Kills every process of this owner's cgroups and removes them. */
    void removeOwner() {
        for (Path owner : owners) {
            killAndRemove(owner);
        }
    }

    /** Removes the cgroups of an owner that is gone (a dead worker), with whatever still runs in them. */
    static void removeDeadOwner(String owner) {
        if (Files.isRegularFile(SYS.resolve("cgroup.controllers"))) {
            killAndRemove(SYS.resolve(TOP).resolve(owner));
            return;
        }
        for (String controller : List.of("pids", "memory")) {
            killAndRemove(SYS.resolve(controller).resolve(TOP).resolve(owner));
        }
    }

    private static void killAndRemove(Path dir) {
        if (!Files.isDirectory(dir)) {
            return;
        }
        try (DirectoryStream<Path> children = Files.newDirectoryStream(dir, Files::isDirectory)) {
            for (Path child : children) {
                killAndRemove(child);
            }
        } catch (IOException e) {
            // Listed again below through cgroup.procs; a child left behind only keeps this one from going.
        }
        for (int round = 0; round < KILL_ROUNDS; round++) {
            List<Long> pids = pids(dir.resolve("cgroup.procs"));
            if (pids.isEmpty()) {
                break;
            }
            for (long pid : pids) {
                ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
            }
            for (long pid : pids) {
                ProcessHandle.of(pid).ifPresent(p -> {
                    try {
                        p.onExit().get(EXIT_WAIT_MS, TimeUnit.MILLISECONDS);
                    } catch (InterruptedException e) {
                        // Cleanup goes on (leaving processes is what it prevents); the caller sees the interrupt.
                        Thread.currentThread().interrupt();
                    } catch (ExecutionException | TimeoutException e) {
                        // Not gone yet: the next round reads the cgroup again.
                    }
                });
            }
        }
        try {
            Files.deleteIfExists(dir);
        } catch (IOException e) {
            // A zombie not yet reaped keeps the cgroup busy; the next start of a worker tries again.
        }
    }

    private static List<Long> pids(Path procs) {
        List<Long> out = new ArrayList<>();
        try {
            for (String line : Files.readAllLines(procs, StandardCharsets.US_ASCII)) {
                if (!line.isBlank()) {
                    out.add(Long.parseLong(line.strip()));
                }
            }
        } catch (IOException | NumberFormatException e) {
            // Gone already.
        }
        return out;
    }

    private static void write(Path file, String value) throws IOException {
        Files.writeString(file, value, StandardCharsets.US_ASCII);
    }
}
