package dev.vigilo.deploy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarFile;
import java.util.stream.Stream;

/**
 * What the deploy module's container tests ({@link ImageIT}, {@link ComposeIT}) share: podman's configuration for the
 * test hosts, the image of deploy/Containerfile built the documented way on the local base, and running commands.
 */
final class Containers {
    private Containers() {}

    /** The environment of every command the tests run: this JVM's, plus {@code CONTAINERS_CONF} (see below). */
    static final Map<String, String> ENV = new HashMap<>(System.getenv());
    /** podman run's resource flags: its default ulimits are above what runc may set on the test hosts. */
    static final List<String> LIMITS = new ArrayList<>();

    private static Path dir;

    /**
     * Writes the podman configuration the test hosts need into {@code into} and points {@link #ENV} at it: runc
     * (crun, podman's default on Debian, cannot start containers on the cgroup v1 test hosts) and default ulimits
     * runc may set (for containers a compose implementation starts, whose podman flags the test does not choose).
     */
    static void configure(Path into) throws Exception {
        dir = into;
        String nofile = run(List.of("sh", "-c", "ulimit -Hn"), Duration.ofMinutes(1))
                .out()
                .strip();
        LIMITS.clear();
        LIMITS.addAll(List.of("--ulimit", "nofile=" + nofile + ":" + nofile, "--ulimit", "nproc=4096:4096"));
        StringBuilder conf = new StringBuilder(
                "[containers]\ndefault_ulimits = [\"nofile=" + nofile + ":" + nofile + "\", \"nproc=4096:4096\"]\n");
        if (onPath("runc")) {
            conf.append("[engine]\nruntime = \"runc\"\ncgroup_manager = \"cgroupfs\"\n");
        }
        Path file = into.resolve("containers.conf");
        Files.writeString(file, conf);
        ENV.put("CONTAINERS_CONF", file.toString());
    }

    private static final String ID = UUID.randomUUID().toString().substring(0, 8);
    /** The local base image (deploy/local-base-image.sh) the tests build on. */
    static final String BASE = "localhost/vigilo-it-base:" + ID;
    /** deploy/Containerfile's image, built on {@link #BASE} by deploy/build-image. */
    static final String IMAGE = "localhost/vigilo-it:" + ID;

    private static Path dist;

    /**
     * Builds {@link #BASE} and {@link #IMAGE} from a checked copy of cli/target's distribution, which it returns, once
     * per test JVM: the image test classes run one after another in failsafe's JVM and share them (the build is
     * minutes on a loaded test machine). A shutdown hook removes both images and the copy.
     */
    static synchronized Path buildImages() throws Exception {
        if (dist != null) {
            return dist;
        }
        Path repository = Manifests.repository();
        Path copy = copyDistribution(repository.resolve("cli/target"), Files.createTempDirectory("vigilo-it-dist"));
        Runtime.getRuntime().addShutdownHook(new Thread(() -> removeImages(copy), "remove-test-images"));
        check(run(List.of(repository.resolve("deploy/local-base-image.sh").toString(), BASE), Duration.ofMinutes(10)));
        Map<String, String> build = new HashMap<>(ENV);
        build.put("VIGILO_DIST", copy.toString());
        build.put("VIGILO_IMAGE_BUILD_ARGS", String.join(" ", LIMITS) + " --build-arg BASE_IMAGE=" + BASE);
        check(run(List.of(repository.resolve("deploy/build-image").toString(), IMAGE), build, Duration.ofMinutes(10)));
        dist = copy;
        return dist;
    }

    private static void removeImages(Path copy) {
        try {
            // Not run(): the test classes' directories are gone by now.
            new ProcessBuilder("podman", "rmi", "-f", IMAGE, BASE)
                    .redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                    .start()
                    .waitFor(2, TimeUnit.MINUTES);
            try (Stream<Path> files = Files.walk(copy)) {
                for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
                    Files.deleteIfExists(p);
                }
            }
        } catch (IOException e) {
            System.err.println("could not remove the test images or " + copy + ": " + e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * cli/target's vigilo-cli.jar and lib/, copied first (another module's build may rewrite them later) and checked:
     * every jar the manifest's Class-Path names is there.
     */
    private static Path copyDistribution(Path target, Path to) throws IOException {
        Path jar = target.resolve("vigilo-cli.jar");
        if (!Files.isRegularFile(jar)) {
            fail(jar + " is missing: build it first (mvn -pl deploy -am verify builds cli before deploy)");
        }
        Files.createDirectories(to.resolve("lib"));
        Files.copy(jar, to.resolve("vigilo-cli.jar"));
        try (Stream<Path> libs = Files.list(target.resolve("lib"))) {
            for (Path p : libs.toList()) {
                Files.copy(p, to.resolve("lib").resolve(p.getFileName()));
            }
        }
        try (JarFile copied = new JarFile(to.resolve("vigilo-cli.jar").toFile())) {
            String classPath = copied.getManifest().getMainAttributes().getValue("Class-Path");
            for (String entry : classPath.trim().split(" +")) {
                assertThat(to.resolve(entry))
                        .as("the manifest's Class-Path entry %s", entry)
                        .isRegularFile();
            }
        }
        return to;
    }

    /** A command's exit code and its output (stdout and stderr together). */
    record Result(int code, String out) {}

    static Result run(List<String> argv, Duration limit) throws Exception {
        return run(argv, ENV, limit);
    }

    /** Runs {@code argv} with {@code env} (only) and stdin from /dev/null, failing after {@code limit}. */
    static Result run(List<String> argv, Map<String, String> env, Duration limit) throws Exception {
        Path out = Files.createTempFile(dir, "out", ".txt");
        ProcessBuilder b = new ProcessBuilder(argv)
                .redirectErrorStream(true)
                .redirectOutput(out.toFile())
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
        b.environment().clear();
        b.environment().putAll(env);
        Process p = b.start();
        if (!p.waitFor(limit.toMillis(), TimeUnit.MILLISECONDS)) {
            p.destroyForcibly();
            fail(argv + " did not end within " + limit + ": " + Files.readString(out, StandardCharsets.UTF_8));
        }
        return new Result(p.exitValue(), Files.readString(out, StandardCharsets.UTF_8));
    }

    static Result check(Result r) {
        assertThat(r.code()).as("exit code; output:%n%s", r.out()).isZero();
        return r;
    }

    /** A condition {@link #waitFor} polls. */
    interface Condition {
        boolean holds() throws Exception;
    }

    /** Polls a condition (an event: a file a container wrote, a server answering), failing after {@code bound}. */
    static void waitFor(Condition c, Duration bound, String what) throws Exception {
        Instant end = Instant.now().plus(bound);
        while (!c.holds()) {
            if (Instant.now().isAfter(end)) {
                fail("gave up waiting for " + what + " after " + bound);
            }
            Thread.sleep(500);
        }
    }

    static boolean onPath(String program) {
        String path = System.getenv().getOrDefault("PATH", "");
        for (String d : path.split(":")) {
            if (!d.isEmpty() && Files.isExecutable(Path.of(d, program))) {
                return true;
            }
        }
        return false;
    }
}
