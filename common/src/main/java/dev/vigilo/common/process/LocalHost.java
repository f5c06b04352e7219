package dev.vigilo.common.process;

import java.io.IOException;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/**
 * This machine's host name, as recorded beside a {@link ProcessRef} so that a reader can tell whether a recorded
 * process is one it can check (same host name) or one of another machine. Read from the kernel
 * ({@code /proc/sys/kernel/hostname}) rather than resolved, so it costs no DNS lookup and is what {@code hostname}
 * prints; {@link InetAddress#getLocalHost()} elsewhere. Also the stricter {@link #processNamespace()}: the identity of
 * the process table a pid is looked up in, for judgements where a host name shared by two containers must not make
 * one's pids look like the other's. Stateless.
 */
public final class LocalHost {
    private static final Path KERNEL_HOSTNAME = Path.of("/proc/sys/kernel/hostname");

    private LocalHost() {}

    private static final Path BOOT_ID = Path.of("/proc/sys/kernel/random/boot_id");
    private static final Path PID_NAMESPACE = Path.of("/proc/self/ns/pid");

    /** This machine's host name, or empty when the platform does not say (then no recorded process counts as local). */
    public static Optional<String> name() {
        try {
            String name = Files.readString(KERNEL_HOSTNAME).strip();
            if (!name.isEmpty()) {
                return Optional.of(name);
            }
        } catch (IOException | SecurityException e) {
            // not Linux, or /proc hidden: ask the JDK
        }
        try {
            String name = InetAddress.getLocalHost().getHostName().strip();
            return name.isEmpty() ? Optional.empty() : Optional.of(name);
        } catch (UnknownHostException | SecurityException e) {
            return Optional.empty();
        }
    }

    /**
     * The identity of the pid space this process lives in: {@code <boot id>/<pid namespace>}, for example
     * {@code 60401cba-4203-460a-8343-d5e857afd0d9/pid:[4026531836]}. Two processes see each other's pids, with the
     * same start times, exactly when they run on the same kernel since the same boot ({@code
     * /proc/sys/kernel/random/boot_id}, new at every boot) and in the same pid namespace ({@code /proc/self/ns/pid}:
     * containers get their own unless they share the host's, as {@code podman run --pid=host} does). A host name does
     * not say that: two containers may share one, and a machine keeps its name across reboots while its pids start
     * over. Whoever records a {@link ProcessRef} for others to judge records this beside it, and only a reader with the
     * same value may judge the process dead from this machine's process table.
     *
     * @return the identity, or empty where the platform does not expose it (not Linux, {@code /proc} hidden): then no
     *     recorded process is judged from here
     */
    public static Optional<String> processNamespace() {
        try {
            String boot = Files.readString(BOOT_ID).strip();
            // The link's target names the namespace by its type and inode, e.g. "pid:[4026531836]".
            String namespace = Files.readSymbolicLink(PID_NAMESPACE).toString();
            if (boot.isEmpty() || namespace.isEmpty()) {
                return Optional.empty();
            }
            return Optional.of(boot + "/" + namespace);
        } catch (IOException | UnsupportedOperationException | SecurityException e) {
            return Optional.empty();
        }
    }
}
