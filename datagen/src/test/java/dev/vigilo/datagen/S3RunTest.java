package dev.vigilo.datagen;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigilo.storage.S3ProxyFixture;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * `datagen run` with an s3:// durable root on s3proxy, twice (the second run resumes and finds
 * nothing to do). A child JVM with AWS_* variables runs it: Lance's MemWAL writer takes its S3
 * settings from the environment only.
 */
class S3RunTest {
    @TempDir
    Path dir;

    @Test
    void runsAndResumesOnS3() throws Exception {
        Files.writeString(dir.resolve("seeds.jsonl"), "{\"id\": \"a\", \"x\": 1}\n{\"id\": \"b\", \"x\": 2}\n");
        Path yaml = dir.resolve("s3p.yaml");
        Files.writeString(yaml, """
        name: s3p
        input: seeds.jsonl
        id_field: id
        steps:
          - {name: t, kind: template, template: "x={{x}}", output_field: y}
          - {name: c, kind: command, command: "cat > /dev/null; echo '{\\"z\\": true}'"}
        """);
        try (S3ProxyFixture s3 = S3ProxyFixture.start()) {
            String root = "s3://" + S3ProxyFixture.BUCKET + "/dg";
            String expected =
                    "{\"completed\":2,\"experiment\":\"e\",\"failed\":0,\"failures_by_type\":{},\"filtered\":0,"
                            + "\"items\":2,\"pipeline\":\"s3p\",\"progress\":1.0,\"running\":0}";
            assertThat(run(s3, yaml, root)).contains("DONE " + expected);
            List<String> second = run(s3, yaml, root);
            assertThat(second).contains("DONE " + expected);
            assertThat(second).noneMatch(l -> l.contains("item_finished")); // nothing left to run
        }
    }

    private List<String> run(S3ProxyFixture s3, Path yaml, String root) throws Exception {
        ProcessBuilder pb = new ProcessBuilder(List.of(
                        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                        "--add-opens=java.base/java.nio=ALL-UNNAMED",
                        "-Djava.io.tmpdir=" + ChildTmp.of(dir),
                        "-cp",
                        System.getProperty("java.class.path"),
                        RunMain.class.getName(),
                        yaml.toString(),
                        root,
                        "e",
                        "2"))
                .redirectError(ProcessBuilder.Redirect.DISCARD);
        Map<String, String> env = pb.environment();
        env.put("AWS_ENDPOINT", s3.endpoint().toString());
        env.put("AWS_REGION", S3ProxyFixture.REGION);
        env.put("AWS_ACCESS_KEY_ID", s3.accessKey());
        env.put("AWS_SECRET_ACCESS_KEY", s3.secretKey());
        env.put("AWS_ALLOW_HTTP", "true");
        env.put("AWS_VIRTUAL_HOSTED_STYLE_REQUEST", "false");
        Process p = pb.start();
        List<String> lines = new ArrayList<>();
        try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            String l;
            while ((l = r.readLine()) != null) lines.add(l);
        }
        assertThat(p.waitFor(120, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as("run output %s", lines).isZero();
        return lines;
    }
}
