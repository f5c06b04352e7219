package dev.vigilo.agent.sandbox;

import dev.vigilo.common.errors.InvalidInputException;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A {@link SandboxAttempt} over {@code <worker>/<name>/work} and {@code <worker>/<name>/tmp}: bwrap or podman argv,
 * the limits around bwrap, and the removal of all of it.
 */
final class AttemptDirectory implements SandboxAttempt {
    private final Sandboxes owner;
    private final SandboxSettings settings;
    private final String name;
    private final Path dir;
    private final Path work;
    private final Path tmp;
    /** The attempt's cgroup.procs files, empty when its limits are prlimit's (or it has none). */
    private final List<Path> cgroupProcs;

    private final AtomicInteger containers = new AtomicInteger();
    private final List<String> containerNames = new ArrayList<>();
    private boolean closed;

    AttemptDirectory(
            Sandboxes owner,
            SandboxSettings settings,
            String name,
            Path dir,
            Path work,
            Path tmp,
            List<Path> cgroupProcs) {
        this.owner = owner;
        this.settings = settings;
        this.name = name;
        this.dir = dir;
        this.work = work;
        this.tmp = tmp;
        this.cgroupProcs = List.copyOf(cgroupProcs);
    }

    @Override
    public SandboxSettings settings() {
        return settings;
    }

    @Override
    public List<String> wrap(List<String> argv, Collection<String> environmentNames) {
        return switch (settings.kind()) {
            case NONE -> List.copyOf(argv);
            case BWRAP -> {
                List<String> bwrap = Launchers.bwrap(settings, work, tmp, argv);
                if (!cgroupProcs.isEmpty()) {
                    yield Launchers.inCgroups(cgroupProcs, bwrap);
                }
                if (settings.memoryMb().isPresent() || settings.pids().isPresent()) {
                    yield Launchers.prlimit(settings.memoryMb(), settings.pids(), bwrap);
                }
                yield bwrap;
            }
            case PODMAN -> {
                String container = "vigilo-" + owner.owner() + "-" + name + "-" + containers.incrementAndGet();
                synchronized (containerNames) {
                    containerNames.add(container);
                }
                yield Launchers.podman(
                        settings,
                        container,
                        owner.owner(),
                        work,
                        tmp,
                        environmentNames,
                        Launchers.HardLimits.ofThisProcess(),
                        argv);
            }
        };
    }

    @Override
    public Path launchDirectory() {
        return work;
    }

    @Override
    public Path workDirectory() {
        return work;
    }

    @Override
    public Path scratchDirectory() {
        return tmp;
    }

    @Override
    public String inside(Path hostPath) {
        Path p = hostPath.toAbsolutePath().normalize();
        if (p.startsWith(work)) {
            return join(Launchers.WORK, work.relativize(p));
        }
        if (p.startsWith(tmp)) {
            return join(Launchers.TMP, tmp.relativize(p));
        }
        throw new IllegalArgumentException(hostPath + " is not in the sandbox's work or scratch directory");
    }

    private static String join(String base, Path rel) {
        String r = rel.toString();
        return r.isEmpty() ? base : base + "/" + r;
    }

    @Override
    public synchronized void reset() {
        removeContainers();
        try {
            Trees.empty(work);
            Trees.empty(tmp);
            fill();
        } catch (IOException e) {
            throw new InvalidInputException(
                    "cannot reset the sandbox directory " + dir + ": " + e.getMessage()
                            + "; check the space and permissions of the worker's sandbox root",
                    e);
        }
    }

    /** Copies the profile's workdir into the work directory. */
    void fill() throws IOException {
        Optional<Path> from = settings.workdir();
        if (from.isPresent()) {
            Trees.copy(from.get(), work);
        }
    }

    @Override
    public List<KeptFile> keptFiles() {
        try {
            return Trees.matching(
                    work, settings.keepFiles(), SandboxSettings.MAX_KEPT_FILES, SandboxSettings.MAX_KEPT_BYTES);
        } catch (IOException e) {
            throw new InvalidInputException("cannot read the kept files of sandbox " + dir + ": " + e.getMessage(), e);
        }
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        removeContainers();
        owner.cgroups().ifPresent(c -> c.removeAttempt(name));
        owner.remove(dir);
    }

    private void removeContainers() {
        List<String> names;
        synchronized (containerNames) {
            names = List.copyOf(containerNames);
            containerNames.clear();
        }
        if (!names.isEmpty()) {
            // Killing the podman client (the attempt's command ended or timed out) does not stop its container.
            owner.removeContainers(names);
        }
    }

    @Override
    public String toString() {
        return "SandboxAttempt[" + settings.kind().wire() + ", " + dir + "]";
    }
}
