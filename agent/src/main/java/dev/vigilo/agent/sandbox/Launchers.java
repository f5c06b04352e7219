package dev.vigilo.agent.sandbox;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/** The argv that start a command in a sandbox: bwrap's, podman's, and the limits put around bwrap. */
final class Launchers {
    /** Where the work directory is inside every sandbox. */
    static final String WORK = "/work";
    /** Where the private scratch directory is inside every sandbox. */
    static final String TMP = "/tmp";
    /** System directories bound read-only into a bwrap sandbox (those that exist; symbolic links stay links). */
    static final List<String> SYSTEM = List.of("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc");
    /**
     * Variables of the worker's host that mean nothing in a container (its own image sets them): not passed to podman.
     */
    static final Set<String> HOST_ONLY = Set.of("PATH", "HOME", "PWD", "OLDPWD", "TMPDIR", "HOSTNAME", "SHELL", "USER");
    /** The per-user process limit of a container without {@code pids}. */
    static final long DEFAULT_NPROC = 4096;
    /** The label every container of a worker carries, its value the worker's owner id. */
    static final String OWNER_LABEL = "vigilo.sandbox.owner";

    private Launchers() {}

    /** {@code bwrap ... -- argv}: see docs/formats/agent-protocol.md, "Sandboxes". */
    static List<String> bwrap(SandboxSettings s, Path work, Path tmp, List<String> argv) {
        // --cap-drop ALL: bwrap started by root keeps root's capabilities inside (in its new user namespace), enough to
        // remount the read-only binds writable and write to the host's /usr and /etc.
        List<String> out = new ArrayList<>(
                List.of("bwrap", "--die-with-parent", "--new-session", "--unshare-all", "--cap-drop", "ALL"));
        if (s.network()) {
            out.add("--share-net");
        }
        for (String dir : SYSTEM) {
            Path p = Path.of(dir);
            if (Files.isSymbolicLink(p)) {
                // Debian's merged /usr: /bin -> usr/bin. A link keeps the layout the programs expect.
                try {
                    out.addAll(List.of("--symlink", Files.readSymbolicLink(p).toString(), dir));
                } catch (IOException e) {
                    out.addAll(List.of("--ro-bind-try", dir, dir));
                }
            } else if (Files.isDirectory(p)) {
                out.addAll(List.of("--ro-bind", dir, dir));
            }
        }
        out.addAll(List.of(
                "--proc",
                "/proc",
                "--dev",
                "/dev",
                "--bind",
                work.toString(),
                WORK,
                "--bind",
                tmp.toString(),
                TMP,
                "--chdir",
                WORK,
                "--setenv",
                "HOME",
                WORK,
                "--setenv",
                "TMPDIR",
                TMP,
                "--"));
        out.addAll(argv);
        return out;
    }

    /**
     * Puts the process into the attempt's cgroups before it becomes bwrap: a shell writes its own pid to each
     * {@code cgroup.procs} and then execs the rest, so nothing of the sandbox ever runs outside them.
     */
    static List<String> inCgroups(List<Path> procs, List<String> argv) {
        List<String> out = new ArrayList<>(List.of(
                "/bin/sh",
                "-c",
                "while [ \"$1\" != -- ]; do echo $$ > \"$1\" || exit 125; shift; done; shift; exec \"$@\"",
                "vigilo-sandbox"));
        procs.forEach(p -> out.add(p.toString()));
        out.add("--");
        out.addAll(argv);
        return out;
    }

    /** {@code prlimit --as=... --nproc=... -- argv}: the fallback where cgroups cannot be created. */
    static List<String> prlimit(Optional<Long> memoryMb, Optional<Integer> pids, List<String> argv) {
        List<String> out = new ArrayList<>(List.of("prlimit"));
        memoryMb.ifPresent(mb -> out.add("--as=" + (mb << 20)));
        pids.ifPresent(n -> out.add("--nproc=" + n));
        out.add("--");
        out.addAll(argv);
        return out;
    }

    /** {@code podman run ...}: see docs/formats/agent-protocol.md, "Sandboxes". */
    static List<String> podman(
            SandboxSettings s,
            String name,
            String owner,
            Path work,
            Path tmp,
            Collection<String> environmentNames,
            HardLimits limits,
            List<String> argv) {
        List<String> out = new ArrayList<>(List.of(
                "podman",
                "run",
                "--rm",
                "-i",
                "--name",
                name,
                "--label",
                OWNER_LABEL + "=" + owner,
                "--network",
                s.network() ? "bridge" : "none",
                // As in bwrap: no capabilities, and nothing gains privileges through setuid programs of the image.
                "--cap-drop",
                "all",
                "--security-opt",
                "no-new-privileges"));
        s.memoryMb().ifPresent(mb -> out.addAll(List.of("--memory", mb + "m", "--memory-swap", mb + "m")));
        s.pids().ifPresent(n -> out.addAll(List.of("--pids-limit", Integer.toString(n))));
        // Podman's default ulimits are above what a worker without CAP_SYS_RESOURCE may set, and the runtime then
        // fails to start; a container gets the worker's own hard limits, which it could never exceed anyway.
        limits.openFiles().ifPresent(n -> out.addAll(List.of("--ulimit", "nofile=" + n + ":" + n)));
        // nproc at the worker's own hard limit is refused by runc on some hosts: the container gets its pids limit,
        // or DEFAULT_NPROC, whichever is lower than the worker's.
        long nproc = Math.min(
                limits.processes().orElse(Long.MAX_VALUE),
                s.pids().map(Long::valueOf).orElse(DEFAULT_NPROC));
        out.addAll(List.of("--ulimit", "nproc=" + nproc + ":" + nproc));
        out.addAll(List.of(
                "-v", work + ":" + WORK + ":rw",
                "-v", tmp + ":" + TMP + ":rw",
                "-w", WORK,
                "-e", "HOME=" + WORK,
                "-e", "TMPDIR=" + TMP));
        environmentNames.stream()
                .filter(n -> !HOST_ONLY.contains(n))
                .sorted()
                // "-e NAME" without a value: podman passes its own value, so no value is ever on a command line.
                .forEach(n -> out.addAll(List.of("-e", n)));
        out.add(s.image().orElseThrow());
        out.addAll(argv);
        return out;
    }

    /**
     * This process's hard limits on open files and processes ({@code /proc/self/limits}); empty where unknown or
     * unlimited.
     */
    record HardLimits(Optional<Long> openFiles, Optional<Long> processes) {
        static HardLimits ofThisProcess() {
            Optional<Long> files = Optional.empty();
            Optional<Long> procs = Optional.empty();
            try {
                for (String line : Files.readAllLines(Path.of("/proc/self/limits"))) {
                    if (line.startsWith("Max open files")) {
                        files = hard(line);
                    } else if (line.startsWith("Max processes")) {
                        procs = hard(line);
                    }
                }
            } catch (IOException e) {
                // Not Linux: podman picks its defaults.
            }
            return new HardLimits(files, procs);
        }

        private static Optional<Long> hard(String line) {
            // "Max open files            20000                20000                files"
            String[] parts = line.substring(20).trim().split("\\s+");
            if (parts.length < 2 || !parts[1].chars().allMatch(Character::isDigit)) {
                return Optional.empty();
            }
            return Optional.of(Long.parseLong(parts[1]));
        }
    }
}
