package dev.vigilo.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.vigilo.storage.S3Clients;
import dev.vigilo.storage.S3ProxyFixture;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.S3Object;

/**
 * {@code vigilo datagen run/status/export} with the checkpoint log on s3proxy, configured only by a storage.toml
 * store: nothing passes the endpoint or region through AWS_* variables, and credentials come from the AWS default
 * chain (here the JVM system properties the fixture publishes, which Lance itself could not see).
 */
class DatagenS3CliTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path home;

    @Test
    void runStatusAndExportWorkOnAStoreConfiguredOnlyInStorageToml() throws Exception {
        try (S3ProxyFixture s3 = S3ProxyFixture.start()) {
            Path storage = home.resolve("storage.toml");
            Files.writeString(storage, S3ProxyFixture.storageToml("shared", s3.endpoint(), "team"));
            CliRunner cli = new CliRunner(home, Map.of(), List.of("--storage-config", storage.toString()));
            Path pipeline = Path.of("..", "examples", "datagen", "pipeline.yaml")
                    .toAbsolutePath()
                    .normalize();

            CliRunner.Result run = cli.run(
                    "datagen",
                    "run",
                    pipeline.toString(),
                    "--experiment",
                    "demo",
                    "--durable-root",
                    "s3://" + S3ProxyFixture.BUCKET + "/team/dg",
                    "--workers",
                    "2");
            assertThat(run.exitCode()).as(run.err() + run.out()).isZero();
            String[] lines = run.out().trim().split("\n");
            JsonNode last = JSON.readTree(lines[lines.length - 1]);
            assertThat(last.get("failed").asLong()).isZero();
            assertThat(last.get("running").asLong()).isZero();

            // The log is in the configured store, under its prefix.
            try (S3Client client = S3Clients.open(s3.spec(""))) {
                List<String> keys =
                        client
                                .listObjectsV2(
                                        b -> b.bucket(S3ProxyFixture.BUCKET).prefix("team/dg/"))
                                .contents()
                                .stream()
                                .map(S3Object::key)
                                .toList();
                assertThat(keys).anyMatch(k -> k.startsWith("team/dg/datagen_checkpoints/quiz/demo/log.lance/"));
            }

            // Read back through the store's name.
            CliRunner.Result status = cli.run(
                    "datagen",
                    "status",
                    "--pipeline",
                    "quiz",
                    "--experiment",
                    "demo",
                    "--durable-root",
                    "store:shared/dg",
                    "--json");
            assertThat(status.exitCode()).as(status.err()).isZero();
            assertThat(JSON.readTree(status.out())).isEqualTo(last);

            Path export = home.resolve("export.jsonl");
            CliRunner.Result exported = cli.run(
                    "datagen",
                    "export",
                    "--pipeline",
                    "quiz",
                    "--experiment",
                    "demo",
                    "--durable-root",
                    "s3://" + S3ProxyFixture.BUCKET + "/team/dg",
                    "--out",
                    export.toString());
            assertThat(exported.exitCode()).as(exported.err()).isZero();

            // The same pipeline on a local root exports the same cases.
            String local = home.resolve("local").toString();
            assertThat(cli.run("datagen", "run", pipeline.toString(), "--experiment", "demo", "--durable-root", local)
                            .exitCode())
                    .isZero();
            Path localExport = home.resolve("local.jsonl");
            String[] exportLocal = {
                "datagen",
                "export",
                "--pipeline",
                "quiz",
                "--experiment",
                "demo",
                "--durable-root",
                local,
                "--out",
                localExport.toString()
            };
            assertThat(cli.run(exportLocal).exitCode()).isZero();
            assertThat(Files.readAllLines(export)).isNotEmpty().isEqualTo(Files.readAllLines(localExport));
        }
    }

    @Test
    void anS3RootNoConfiguredStoreHoldsIsAClearError() throws Exception {
        Path storage = home.resolve("storage.toml");
        Files.writeString(
                storage, S3ProxyFixture.storageToml("shared", java.net.URI.create("http://127.0.0.1:9"), "team"));
        CliRunner cli = new CliRunner(home, Map.of(), List.of("--storage-config", storage.toString()));

        CliRunner.Result r = cli.run(
                "datagen", "status", "--pipeline", "p", "--experiment", "e", "--durable-root", "s3://elsewhere/x");
        assertThat(r.exitCode()).isEqualTo(ExitCode.INVALID_INPUT);
        assertThat(r.err().trim())
                .startsWith("vigilo: error: durable root \"s3://elsewhere/x\": no S3 store")
                .contains("shared = s3:http://127.0.0.1:9/" + S3ProxyFixture.BUCKET + "/team")
                .doesNotContain("\n");

        CliRunner.Result unknown =
                cli.run("datagen", "status", "--pipeline", "p", "--experiment", "e", "--store", "nope");
        assertThat(unknown.exitCode()).isEqualTo(ExitCode.INVALID_INPUT);
        assertThat(unknown.err()).contains("no store named \"nope\"");

        CliRunner.Result both = cli.run(
                "datagen",
                "status",
                "--pipeline",
                "p",
                "--experiment",
                "e",
                "--store",
                "shared",
                "--durable-root",
                "x");
        assertThat(both.exitCode()).isEqualTo(ExitCode.INVALID_INPUT);
        assertThat(both.err()).contains("--durable-root or --store");
    }
}
