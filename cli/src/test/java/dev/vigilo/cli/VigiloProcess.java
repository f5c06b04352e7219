package dev.vigilo.cli;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** Runs the packaged CLI ({@code target/vigilo-cli.jar}) as a real child process. */
final class VigiloProcess {
    record Result(int exitCode, String out, String err) {}

    static final Path JAR = Path.of("target", "vigilo-cli.jar").toAbsolutePath();

    private VigiloProcess() {}

    static ProcessBuilder builder(Path home, Map<String, String> env, List<String> jvmOptions, String... args) {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(jvmOptions);
        command.add("-jar");
        command.add(JAR.toString());
        command.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(command);
        pb.environment().put(Environment.HOME_VARIABLE, home.toString());
        pb.environment().remove(Environment.CONTROL_DB_VARIABLE);
        pb.environment().remove(Environment.STORAGE_CONFIG_VARIABLE);
        pb.environment().putAll(env);
        return pb;
    }

    /** Runs to completion (bounded) and captures output. */
    static Result run(Path home, Map<String, String> env, List<String> jvmOptions, long timeoutSeconds, String... args)
            throws IOException, InterruptedException {
        Path out = Files.createTempFile("vigilo-out", ".txt");
        Path err = Files.createTempFile("vigilo-err", ".txt");
        try {
            Process p = builder(home, env, jvmOptions, args)
                    .redirectOutput(out.toFile())
                    .redirectError(err.toFile())
                    .start();
            if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
                p.destroyForcibly().waitFor();
                throw new AssertionError("vigilo " + String.join(" ", args) + " did not finish in " + timeoutSeconds
                        + " s; stderr: " + Files.readString(err));
            }
            return new Result(
                    p.exitValue(),
                    Files.readString(out, StandardCharsets.UTF_8),
                    Files.readString(err, StandardCharsets.UTF_8));
        } finally {
            Files.deleteIfExists(out);
            Files.deleteIfExists(err);
        }
    }
}
