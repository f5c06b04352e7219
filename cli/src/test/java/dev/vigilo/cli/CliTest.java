package dev.vigilo.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.vigilo.control.TestPostgres;
import dev.vigilo.storage.S3ProxyFixture;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/** The real CLI, in-process, against a real PostgreSQL and real object stores. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class CliTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    static Path home;

    private CliRunner cli;
    private String dbUrl;

    @BeforeAll
    void setUp() {
        dbUrl = TestPostgres.newDatabaseUrl();
        cli = new CliRunner(home, Map.of(), List.of("--control-db", dbUrl));
    }

    private Path write(String name, String content) throws IOException {
        Path file = home.resolve(name);
        Files.writeString(file, content);
        return file;
    }

    private static String cases(int n) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < n; i++) {
            b.append("{\"id\":\"c").append(i).append("\",\"input\":").append(i).append("}\n");
        }
        return b.toString();
    }

    private static String readString(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    @Test
    void helpAndVersion() {
        CliRunner.Result help = cli.run("--help");
        assertThat(help.exitCode()).isZero();
        assertThat(help.out()).contains("Usage: vigilo", "quickstart", "dataset", "VIGILO_HOME", "--control-db");
        assertThat(cli.run("--version").out()).startsWith("vigilo ");
        for (String sub : List.of("upload", "show", "list", "verify")) {
            CliRunner.Result r = cli.run("dataset", sub, "--help");
            assertThat(r.exitCode()).as(sub).isZero();
            assertThat(r.out()).as(sub).contains("Usage: vigilo dataset " + sub);
        }
        assertThat(cli.run("quickstart", "--help").out()).contains("Usage: vigilo quickstart");
    }

    @Test
    void usageErrorsExitTwo() {
        CliRunner.Result r = cli.run("dataset", "uplod");
        assertThat(r.exitCode()).isEqualTo(ExitCode.USAGE);
        assertThat(r.err()).contains("uplod", "--help");
        assertThat(cli.run("dataset", "upload").exitCode()).isEqualTo(ExitCode.USAGE);
    }

    @Test
    void uploadShowListVerifyRoundTrip() throws Exception {
        Path file = write("round.jsonl", cases(5));
        CliRunner.Result up = cli.run("dataset", "upload", file.toString(), "--name", "round", "--json");
        assertThat(up.exitCode()).as(up.err()).isZero();
        JsonNode uploaded = JSON.readTree(up.out());
        String id = uploaded.get("upload_id").asText();
        assertThat(uploaded.get("case_count").asLong()).isEqualTo(5);
        assertThat(uploaded.get("source_hash").asText())
                .isEqualTo(
                        dev.vigilo.storage.Sha256.of(Files.readAllBytes(file)).toHex());

        CliRunner.Result plain = cli.run("dataset", "upload", file.toString());
        assertThat(plain.exitCode()).isZero();
        assertThat(plain.out().trim()).matches("[0-9a-f-]{36}");

        JsonNode shown = JSON.readTree(cli.run("dataset", "show", id, "--json").out());
        for (String key : List.of("upload_id", "name", "case_count", "source_hash", "membership_uuid", "storage")) {
            assertThat(shown.has(key)).as(key).isTrue();
        }
        assertThat(shown.get("name").asText()).isEqualTo("round");
        assertThat(shown.get("storage").asText()).isEqualTo("local:" + home.resolve("objects"));
        assertThat(cli.run("dataset", "show", id).out()).contains("membership uuid:", id);

        JsonNode listed = JSON.readTree(cli.run("dataset", "list", "--json").out());
        assertThat(listed.findValuesAsText("upload_id"))
                .contains(id, plain.out().trim());
        assertThat(cli.run("dataset", "list").out()).contains(id, "round");

        CliRunner.Result verified = cli.run("dataset", "verify", id, "--json");
        assertThat(verified.exitCode()).isZero();
        JsonNode v = JSON.readTree(verified.out());
        assertThat(v.get("intact").asBoolean()).isTrue();
        assertThat(v.get("case_count").asLong()).isEqualTo(5);
    }

    @Test
    void badInputExitsThreeWithLocationAndStoresNothing() throws Exception {
        int before = JSON.readTree(cli.run("dataset", "list", "--json").out()).size();
        Path bad = write("bad.jsonl", "{\"id\":\"a\",\"input\":1}\n{\"id\":\"a\",\"input\":2}\n");
        CliRunner.Result r = cli.run("dataset", "upload", bad.toString());
        assertThat(r.exitCode()).isEqualTo(ExitCode.INVALID_INPUT);
        assertThat(r.err()).contains(bad + ":2:", "duplicate case id \"a\"", "line 1");
        assertThat(r.out()).isEmpty();

        CliRunner.Result missing =
                cli.run("dataset", "upload", home.resolve("nope.jsonl").toString());
        assertThat(missing.exitCode()).isEqualTo(ExitCode.INVALID_INPUT);
        assertThat(missing.err()).contains("nope.jsonl", "no such file");

        assertThat(JSON.readTree(cli.run("dataset", "list", "--json").out())).hasSize(before);
    }

    @Test
    void unknownOrMalformedIdsExitThree() {
        CliRunner.Result notUuid = cli.run("dataset", "show", "not-a-uuid");
        assertThat(notUuid.exitCode()).isEqualTo(ExitCode.INVALID_INPUT);
        assertThat(notUuid.err()).contains("not an upload id");
        CliRunner.Result unknown = cli.run("dataset", "verify", "3f2b6c1e-8d4a-4e7b-9c0d-1a2b3c4d5e6f");
        assertThat(unknown.exitCode()).isEqualTo(ExitCode.INVALID_INPUT);
        assertThat(unknown.err()).contains("no finalized dataset");
    }

    @Test
    void verifyReportsTheDamagedKeyAndExitsOne() throws Exception {
        String id = cli.run(
                        "dataset",
                        "upload",
                        write("damage.jsonl", cases(50).replace("\"c", "\"damage-"))
                                .toString())
                .out()
                .trim();
        Path caseFile;
        try (Stream<Path> files = Files.walk(home.resolve("objects/datasets/cases"))) {
            caseFile = files.filter(Files::isRegularFile)
                    .filter(f -> readString(f).contains("\"damage-49\""))
                    .findFirst()
                    .orElseThrow();
        }
        byte[] bytes = Files.readAllBytes(caseFile);
        bytes[bytes.length - 3] ^= 0x20;
        Files.write(caseFile, bytes);
        String key = home.resolve("objects").relativize(caseFile).toString();

        CliRunner.Result r = cli.run("dataset", "verify", id);
        assertThat(r.exitCode()).isEqualTo(ExitCode.FAILED);
        assertThat(r.out()).contains("DAMAGED: " + key);
        JsonNode json = JSON.readTree(cli.run("dataset", "verify", id, "--json").out());
        assertThat(json.get("intact").asBoolean()).isFalse();
        assertThat(json.get("damaged_key").asText()).isEqualTo(key);
    }

    @Test
    void s3StorageThroughConfigFileAndEnvironment() throws Exception {
        try (S3ProxyFixture s3 = S3ProxyFixture.start()) {
            Path config = write("storage.toml", """
                    [stores.shared]
                    kind = "s3"
                    endpoint = "%s"
                    region = "us-east-1"
                    bucket = "%s"
                    prefix = "cli-test"
                    path_style = true
                    """.formatted(s3.endpoint(), S3ProxyFixture.BUCKET));
            Path file = write("s3.jsonl", cases(30));
            CliRunner.Result up =
                    cli.run("--storage-config", config.toString(), "dataset", "upload", file.toString(), "--json");
            assertThat(up.exitCode()).as(up.err()).isZero();
            JsonNode entry = JSON.readTree(up.out());
            assertThat(entry.get("storage").asText())
                    .isEqualTo("s3:" + s3.endpoint() + "/" + S3ProxyFixture.BUCKET + "/cli-test");
            String id = entry.get("upload_id").asText();

            assertThat(cli.run("dataset", "verify", id, "--storage-config", config.toString())
                            .exitCode())
                    .isZero();
            CliRunner viaEnv = new CliRunner(
                    home,
                    Map.of(
                            Environment.STORAGE_CONFIG_VARIABLE,
                            config.toString(),
                            Environment.CONTROL_DB_VARIABLE,
                            dbUrl),
                    List.of());
            CliRunner.Result envVerify = viaEnv.run("dataset", "verify", id, "--json");
            assertThat(envVerify.exitCode()).as(envVerify.err()).isZero();
            assertThat(JSON.readTree(envVerify.out()).get("intact").asBoolean()).isTrue();
            // Without the config, the default local store does not hold this dataset: a clear error, exit 3.
            CliRunner.Result wrongStore = cli.run("dataset", "verify", id);
            assertThat(wrongStore.exitCode()).isEqualTo(ExitCode.INVALID_INPUT);
            assertThat(wrongStore.err()).contains("no store bound to s3:", "--storage-config");
        }
    }

    @Test
    void invalidStorageConfigIsAClearError() throws Exception {
        Path config = write("broken.toml", "[stores.x]\nkind = \"ftp\"\n");
        CliRunner.Result r = cli.run(
                "--storage-config",
                config.toString(),
                "dataset",
                "upload",
                write("any.jsonl", cases(1)).toString());
        assertThat(r.exitCode()).isEqualTo(ExitCode.INVALID_INPUT);
        assertThat(r.err()).contains("broken.toml", "ftp");
    }
}
