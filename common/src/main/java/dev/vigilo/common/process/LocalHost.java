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
 * prints; {@link InetAddress#getLocalHost()} elsewhere. Stateless.
 */
public final class LocalHost {
    private static final Path KERNEL_HOSTNAME = Path.of("/proc/sys/kernel/hostname");

    private LocalHost() {}

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
}
