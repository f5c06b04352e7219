package dev.vigilo.cli;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * "Hosts" on one machine for MultiHostIT: each a network namespace ({@code ip netns}) with its own address on a
 * bridge, reached from the others and from the test's own namespace (which holds the bridge's address) only over that
 * bridge. Processes start in a host through {@link #command}: {@code ip netns exec} into its network namespace and
 * {@code unshare} into a new pid namespace, so a worker there is "on another machine" for the lease-holder judgement
 * too (docs/execution.md, "Resume after a kill": a holder of another pid space is never judged, its leases expire).
 *
 * <p>Needs root, iproute2 ({@code ip}), util-linux ({@code unshare}) and nftables ({@code nft}, for {@link #cut}).
 * Every name starts with {@link #PREFIX}; {@link #create} first removes what a killed earlier run left (its processes
 * are killed with its namespaces), and a lock file keeps two test JVMs of this machine from sharing the names.
 */
final class NetworkHosts implements AutoCloseable {
    /** Prefix of every namespace, link and nftables table made here. */
    static final String PREFIX = "vgmh-";
    /** The bridge's network; the test's own namespace holds {@code .1}, hosts get {@code .2} on. */
    static final String SUBNET = "10.231.77.";

    private static final String BRIDGE = PREFIX + "br";
    private static final String CUT_TABLE = "vgmh_cut";
    private static final Path LOCK = Path.of(System.getProperty("java.io.tmpdir"), "vigilo-multihost.lock");

    private final Map<String, String> addresses = new LinkedHashMap<>();
    private final FileChannel lockFile;
    private final FileLock lock;

    private NetworkHosts(FileChannel lockFile, FileLock lock) {
        this.lockFile = lockFile;
        this.lock = lock;
    }

    /**
     * Makes the bridge and one namespace per name (addresses {@code SUBNET + 2}, {@code + 3}, ... in order).
     *
     * @throws IllegalStateException naming the command that failed and its output, when namespaces cannot be made
     *     here (not root, no iproute2, no kernel support)
     */
    static NetworkHosts create(List<String> names) throws IOException, InterruptedException {
        FileChannel channel = FileChannel.open(LOCK, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
        NetworkHosts hosts = new NetworkHosts(channel, channel.lock());
        try {
            removeLeftovers();
            sh("ip", "link", "add", BRIDGE, "type", "bridge");
            sh("ip", "addr", "add", SUBNET + "1/24", "dev", BRIDGE);
            sh("ip", "link", "set", BRIDGE, "up");
            int next = 2;
            for (String name : names) {
                String ns = PREFIX + name;
                String address = SUBNET + next++;
                sh("ip", "netns", "add", ns);
                // The host side keeps the namespace's name (at most 15 characters), the inside is eth0.
                sh("ip", "link", "add", ns, "type", "veth", "peer", "name", "eth0", "netns", ns);
                sh("ip", "link", "set", ns, "master", BRIDGE);
                sh("ip", "link", "set", ns, "up");
                sh("ip", "netns", "exec", ns, "ip", "link", "set", "lo", "up");
                sh("ip", "netns", "exec", ns, "ip", "addr", "add", address + "/24", "dev", "eth0");
                sh("ip", "netns", "exec", ns, "ip", "link", "set", "eth0", "up");
                hosts.addresses.put(name, address);
            }
            return hosts;
        } catch (IOException | InterruptedException | RuntimeException e) {
            hosts.close();
            throw e;
        }
    }

    /** The address of host {@code name}. */
    String address(String name) {
        String a = addresses.get(name);
        if (a == null) {
            throw new IllegalArgumentException("no host " + name);
        }
        return a;
    }

    /** The bridge's address: the test's own namespace as the hosts see it. */
    static String bridgeAddress() {
        return SUBNET + "1";
    }

    /**
     * {@code command} to run in host {@code name}: in its network namespace and a new pid namespace of which it is
     * process 1 (so it and everything it starts die together); {@code unshare --kill-child} makes the process the
     * test holds ({@code unshare}) take its child down when it is killed.
     */
    List<String> command(String name, List<String> command) {
        address(name);
        List<String> out = new ArrayList<>(List.of(
                "ip", "netns", "exec", PREFIX + name, "unshare", "--pid", "--fork", "--mount-proc", "--kill-child"));
        out.addAll(command);
        return out;
    }

    /** Whether a TCP connection from host {@code from} to {@code address:port} opens within 5 s. */
    boolean connects(String from, String address, int port) throws IOException, InterruptedException {
        return run(List.of(
                                "ip",
                                "netns",
                                "exec",
                                PREFIX + from,
                                "timeout",
                                "5",
                                "bash",
                                "-c",
                                "exec 3<>/dev/tcp/" + address + "/" + port))
                        .exit
                == 0;
    }

    /**
     * Kills host {@code name} outright: SIGKILL to every process in its network namespace (its power cord pulled; its
     * namespace and address stay, with nothing answering).
     */
    void kill(String name) throws IOException, InterruptedException {
        killAll(PREFIX + name);
    }

    /** The pids of the processes in host {@code name}'s network namespace. */
    List<Long> pids(String name) throws IOException, InterruptedException {
        return pidsOf(PREFIX + name);
    }

    /**
     * Cuts host {@code name} off from {@code address}: nftables in the host's namespace drops every packet to and from
     * it (connections hang, as over a broken network; nothing is refused).
     */
    void cut(String name, String address) throws IOException, InterruptedException {
        String rules = "table inet " + CUT_TABLE + " {\n"
                + "  chain out { type filter hook output priority 0; policy accept; ip daddr " + address + " drop; }\n"
                + "  chain in { type filter hook input priority 0; policy accept; ip saddr " + address + " drop; }\n"
                + "}\n";
        Path file = Files.createTempFile("vgmh-cut", ".nft");
        try {
            Files.writeString(file, rules);
            sh("ip", "netns", "exec", PREFIX + name, "nft", "-f", file.toString());
        } finally {
            Files.deleteIfExists(file);
        }
    }

    /** Undoes {@link #cut}: the host reaches the address again. */
    void reconnect(String name) throws IOException, InterruptedException {
        sh("ip", "netns", "exec", PREFIX + name, "nft", "delete", "table", "inet", CUT_TABLE);
    }

    /** Kills every process of every host and removes the namespaces and the bridge. */
    @Override
    public void close() throws IOException {
        try {
            removeLeftovers();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            lock.release();
            lockFile.close();
        }
    }

    /** Removes every namespace (killing its processes first) and the bridge named with {@link #PREFIX}. */
    private static void removeLeftovers() throws IOException, InterruptedException {
        Result list = run(List.of("ip", "netns", "list"));
        for (String line : list.output.split("\n")) {
            String ns = line.strip().split("\\s+")[0];
            if (ns.startsWith(PREFIX)) {
                killAll(ns);
                run(List.of("ip", "link", "del", ns)); // its veth pair, at once (the host side has its name)
                run(List.of("ip", "netns", "del", ns));
            }
        }
        // The kernel destroys a deleted namespace, and with it the veth pairs, asynchronously (seconds to minutes on
        // a loaded machine): delete this namespace's ends, the bridge and any veth of an earlier run now, so the names
        // are free when this method returns.
        for (String line : run(List.of("ip", "-o", "link", "show")).output.split("\n")) {
            String[] fields = line.split(":\\s+", 3);
            if (fields.length >= 2) {
                String name = fields[1].split("@")[0].strip();
                if (name.startsWith(PREFIX)) {
                    run(List.of("ip", "link", "del", name));
                }
            }
        }
    }

    private static void killAll(String ns) throws IOException, InterruptedException {
        for (Long pid : pidsOf(ns)) {
            ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
        }
        // Wait until the kernel has taken them down (SIGKILL is asynchronous), so the namespace is empty afterwards.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!pidsOf(ns).isEmpty()) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("processes of " + ns + " survived SIGKILL: " + pidsOf(ns));
            }
            Thread.sleep(20);
        }
    }

    private static List<Long> pidsOf(String ns) throws IOException, InterruptedException {
        Result r = run(List.of("ip", "netns", "pids", ns));
        List<Long> pids = new ArrayList<>();
        if (r.exit != 0) {
            return pids; // gone already
        }
        for (String line : r.output.split("\n")) {
            if (!line.isBlank()) {
                pids.add(Long.parseLong(line.strip()));
            }
        }
        return pids;
    }

    private record Result(int exit, String output) {}

    /** Runs a command that must succeed. */
    private static void sh(String... command) throws IOException, InterruptedException {
        Result r = run(List.of(command));
        if (r.exit != 0) {
            throw new IllegalStateException(String.join(" ", command) + " exited " + r.exit + ": " + r.output.strip());
        }
    }

    private static Result run(List<String> command) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        p.getOutputStream().close();
        byte[] out = p.getInputStream().readAllBytes();
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new IllegalStateException(String.join(" ", command) + " did not finish in 60 s");
        }
        return new Result(p.exitValue(), new String(out, StandardCharsets.UTF_8));
    }

    /** Whether {@code command} is an executable on the PATH (or in /usr/sbin, /sbin: root's tools). */
    static boolean available(String command) {
        List<String> dirs = new ArrayList<>(
                List.of(System.getenv().getOrDefault("PATH", "/usr/bin:/bin").split(":")));
        dirs.addAll(List.of("/usr/sbin", "/sbin"));
        return dirs.stream().anyMatch(d -> Files.isExecutable(Path.of(d, command)));
    }
}
