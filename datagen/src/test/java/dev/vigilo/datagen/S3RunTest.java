package dev.vigilo.datagen;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigilo.common.crash.ChildJvm;
import dev.vigilo.storage.S3ProxyFixture;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * `datagen run` on s3proxy, configured only by a storage.toml and credentials from the AWS default
 * chain's shared credentials file (the child JVM has no AWS_* endpoint, region or key variables),
 * twice: once with an s3:// root mapped to the configured store, once naming the store (the second
 * run resumes the same experiment and finds nothing to do).
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
            Path storage = dir.resolve("storage.toml");
            Files.writeString(storage, S3ProxyFixture.storageToml("shared", s3.endpoint(), "team"));
            String expected =
                    "{\"completed\":2,\"experiment\":\"e\",\"failed\":0,\"failures_by_type\":{},\"filtered\":0,"
                            + "\"filtered_by_step\":{},\"items\":2,\"pipeline\":\"s3p\",";
            assertThat(run(yaml, "s3://" + S3ProxyFixture.BUCKET + "/team/dg", storage))
                    .anyMatch(l -> l.startsWith("DONE " + expected) && l.contains("\"progress\":1.0"));
            List<String> second = run(yaml, "store:shared/dg", storage);
            assertThat(second).anyMatch(l -> l.startsWith("DONE " + expected) && l.contains("\"running\":0"));
            assertThat(second).noneMatch(l -> l.contains("item_finished")); // nothing left to run
        }
    }

    private List<String> run(Path yaml, String root, Path storage) throws Exception {
        ProcessBuilder pb = new ProcessBuilder(ChildJvm.command(
                        dir, RunMain.class.getName(), yaml.toString(), root, "e", "2", storage.toString()))
                .redirectError(ProcessBuilder.Redirect.DISCARD);
        S3ProxyFixture.standardChainOnly(pb.environment(), dir);
        Process p = pb.start();
        List<String> lines = new ArrayList<>();
        try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            String l;
            while ((l = r.readLine()) != null) {
                lines.add(l);
            }
        }
        assertThat(p.waitFor(120, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as("run output %s", lines).isZero();
        return lines;
    }
}
