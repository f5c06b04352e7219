package dev.vigilo.storage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import dev.vigilo.common.errors.InvalidInputException;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import org.assertj.core.api.AbstractThrowableAssert;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class StorageConfigTest {
    @TempDir
    Path dir;

    @Test
    void loadsBothKinds() throws IOException {
        Path file = write("""
                # the shared bucket is the default
                default = "shared"

                [stores.disk]
                kind = "local"
                root = "/var/lib/vigilo/objects"

                [stores.shared]
                kind = "s3"
                endpoint = "http://127.0.0.1:9000"
                region = "us-east-1"
                bucket = "vigilo-data"
                prefix = "/team-a/"
                path_style = true
                """);

        StorageConfig config = StorageConfig.load(file);

        assertThat(config.source()).isEqualTo(file.toAbsolutePath().normalize().toString());
        assertThat(config.stores()).extracting(StoreSpec::name).containsExactly("disk", "shared");
        assertThat(config.defaultStore().name()).isEqualTo("shared");
        assertThat(config.store("disk"))
                .get()
                .isEqualTo(new StoreSpec.Local("disk", Path.of("/var/lib/vigilo/objects")));
        assertThat(config.store("shared"))
                .get()
                .isEqualTo(new StoreSpec.S3(
                        "shared",
                        Optional.of(URI.create("http://127.0.0.1:9000")),
                        "us-east-1",
                        "vigilo-data",
                        "team-a",
                        true));
        assertThat(config.store("nope")).isEmpty();
        assertThat(config.store("disk").get().binding().value()).isEqualTo("local:/var/lib/vigilo/objects");
        assertThat(config.store("shared").get().binding().value())
                .isEqualTo("s3:http://127.0.0.1:9000/vigilo-data/team-a");
    }

    @Test
    void s3DefaultsAndAwsBinding() throws IOException {
        StorageConfig config = StorageConfig.load(write("""
                [stores.aws]
                kind = "s3"
                region = "eu-west-1"
                bucket = "b"
                """));

        StoreSpec.S3 spec = (StoreSpec.S3) config.defaultStore();
        assertThat(spec.endpoint()).isEmpty();
        assertThat(spec.prefix()).isEmpty();
        assertThat(spec.pathStyle()).isFalse();
        assertThat(spec.binding().value()).isEqualTo("s3:aws/b");
    }

    @Test
    void endpointIsNormalizedSoBindingsCompare() throws IOException {
        StorageConfig config = StorageConfig.load(write("""
                [stores.s]
                kind = "s3"
                endpoint = "HTTP://MinIO.local:9000/"
                region = "us-east-1"
                bucket = "b"
                """));

        assertThat(config.defaultStore().binding().value()).isEqualTo("s3:http://minio.local:9000/b");
    }

    @Test
    void relativeRootResolvesAgainstTheFilesDirectory() throws IOException {
        Path sub = Files.createDirectories(dir.resolve("etc"));
        Path file = Files.writeString(sub.resolve("storage.toml"), """
                [stores.here]
                kind = "local"
                root = "../data/./objects"
                """);

        StoreSpec spec = StorageConfig.load(file).defaultStore();

        Path expected = dir.resolve("data/objects").toAbsolutePath().normalize();
        assertThat(spec).isEqualTo(new StoreSpec.Local("here", expected));
        assertThat(spec.binding().value()).isEqualTo("local:" + expected);
    }

    @Test
    void resolveFindsTheStoreOfABinding() throws IOException {
        StorageConfig config = StorageConfig.load(write("""
                default = "a"
                [stores.a]
                kind = "local"
                root = "/srv/a"
                [stores.b]
                kind = "s3"
                endpoint = "http://127.0.0.1:9000"
                region = "us-east-1"
                bucket = "bucket"
                prefix = "prefix"
                """));

        assertThat(config.resolve(new StoreBinding("local:/srv/a")))
                .map(StoreSpec::name)
                .contains("a");
        assertThat(config.resolve(new StoreBinding("s3:http://127.0.0.1:9000/bucket/prefix")))
                .map(StoreSpec::name)
                .contains("b");
        assertThat(config.resolve(new StoreBinding("s3:http://127.0.0.1:9000/bucket")))
                .isEmpty();
    }

    @Test
    void localDefault() {
        StorageConfig config = StorageConfig.localDefault(Path.of("/tmp/vigilo/../vigilo-objects"));

        assertThat(config.defaultStore()).isEqualTo(new StoreSpec.Local("local", Path.of("/tmp/vigilo-objects")));
        assertThat(config.stores()).hasSize(1);
        assertThat(config.store("local")).isPresent();
        assertThat(config.source()).isEqualTo("built-in default (/tmp/vigilo-objects)");
        assertThat(config.resolve(new StoreBinding("local:/tmp/vigilo-objects")))
                .isPresent();
    }

    @Test
    void openedStoresHaveTheSpecsBinding() throws IOException {
        StorageConfig config = StorageConfig.localDefault(dir.resolve("objects"));

        try (ObjectStore store = ObjectStores.open(config.defaultStore())) {
            assertThat(store.binding()).isEqualTo(config.defaultStore().binding());
        }
    }

    @Test
    void missingFile() {
        Path file = dir.resolve("absent.toml");

        assertThatThrownBy(() -> StorageConfig.load(file))
                .isInstanceOf(InvalidInputException.class)
                .hasMessage("storage config " + file + " does not exist; give the path of a storage.toml file");
    }

    @Test
    void aPipeOrADirectoryIsRefusedBeforeItIsOpened() throws Exception {
        Path fifo = dir.resolve("storage.fifo");
        assertThat(new ProcessBuilder("mkfifo", fifo.toString()).start().waitFor())
                .isZero();
        // Opening the pipe would block this test for ever; the check reads only its metadata.
        assertTimeoutPreemptively(
                Duration.ofSeconds(20),
                () -> assertThatThrownBy(() -> StorageConfig.load(fifo))
                        .isInstanceOf(InvalidInputException.class)
                        .hasMessage("storage config " + fifo
                                + " is a named pipe (FIFO), not a regular file; give the path of a storage.toml file"));
        assertThatThrownBy(() -> StorageConfig.load(dir))
                .hasMessageContaining(dir + " is a directory, not a regular file");
    }

    @Test
    void aLocalRootThatExistsMustBeADirectory() throws IOException {
        Path notADirectory = Files.writeString(dir.resolve("objects"), "");
        expectError(
                write("[stores.disk]\nkind = \"local\"\nroot = \"" + notADirectory + "\"\n"),
                "stores.disk.root: " + notADirectory + " is a regular file, not a directory; point it at a directory");
    }

    @Test
    void syntaxErrorNamesLineAndColumn() throws IOException {
        Path file = write("""
                [stores.a]
                kind = "local"
                root = "/x
                """);

        expectError(file, ":3:").hasMessageContaining(": not valid TOML: ");
    }

    @Test
    void duplicateKeyIsASyntaxError() throws IOException {
        expectError(write("""
                [stores.a]
                kind = "local"
                kind = "s3"
                """), ": not valid TOML: ").hasMessageContaining("Duplicate key");
    }

    @Test
    void unknownKeysAtEveryLevel() throws IOException {
        expectError(write("""
                defualt = "a"
                [stores.a]
                kind = "local"
                root = "/x"
                """), "defualt: unknown key");
        expectError(write("""
                [stores.shared]
                kind = "s3"
                region = "us-east-1"
                buckett = "b"
                """), "stores.shared.buckett: unknown key");
        expectError(write("""
                [stores.disk]
                kind = "local"
                root = "/x"
                prefix = "p"
                """), "stores.disk.prefix: unknown key");
    }

    @Test
    void missingRequiredKeys() throws IOException {
        expectError(write("""
                [stores.shared]
                kind = "s3"
                region = "us-east-1"
                """), "stores.shared: missing \"bucket\"");
        expectError(write("""
                [stores.shared]
                kind = "s3"
                bucket = "b"
                """), "stores.shared: missing \"region\"");
        expectError(write("""
                [stores.disk]
                kind = "local"
                """), "stores.disk: missing \"root\"");
        expectError(write("""
                [stores.disk]
                root = "/x"
                """), "stores.disk: missing \"kind\"");
    }

    @Test
    void unknownKind() throws IOException {
        expectError(write("""
                [stores.g]
                kind = "gcs"
                bucket = "b"
                """), "stores.g.kind: unknown kind \"gcs\"");
    }

    @Test
    void wrongValueTypes() throws IOException {
        expectError(write("""
                [stores.s]
                kind = "s3"
                region = "us-east-1"
                bucket = "b"
                path_style = "yes"
                """), "stores.s.path_style: expected true or false, got a string");
        expectError(write("""
                [stores.d]
                kind = "local"
                root = 7
                """), "stores.d.root: expected a string, got a number");
        expectError(write("""
                stores = "everything"
                """), "stores: expected a table of stores, got a string");
        expectError(write("""
                [stores.s]
                kind = "s3"
                endpoint = "ftp://example.com"
                region = "us-east-1"
                bucket = "b"
                """), "stores.s.endpoint: expected http://HOST[:PORT]");
    }

    @Test
    void defaultMustNameAConfiguredStore() throws IOException {
        expectError(write("""
                default = "shared"
                [stores.disk]
                kind = "local"
                root = "/x"
                """), "default: no store named \"shared\" (configured: disk)");
    }

    @Test
    void defaultIsRequiredWithSeveralStores() throws IOException {
        expectError(write("""
                [stores.a]
                kind = "local"
                root = "/a"
                [stores.b]
                kind = "local"
                root = "/b"
                """), "default: missing; with 2 stores (a, b)");
    }

    @Test
    void noStores() throws IOException {
        expectError(write(""), "stores: no stores configured");
        expectError(write("""
                default = "a"
                """), "stores: no stores configured");
    }

    @Test
    void credentialsAreRejected() throws IOException {
        expectError(write("""
                [stores.shared]
                kind = "s3"
                region = "us-east-1"
                bucket = "b"
                access_key = "AKIA..."
                """), "stores.shared.access_key: credentials do not belong in the storage config")
                .hasMessageContaining("AWS_ACCESS_KEY_ID");
        expectError(write("""
                [stores.shared]
                kind = "s3"
                region = "us-east-1"
                bucket = "b"
                secret_key = "..."
                """), "stores.shared.secret_key: credentials").hasMessageContaining("default provider chain");
        expectError(write("""
                aws_secret_access_key = "..."
                [stores.a]
                kind = "local"
                root = "/a"
                """), "aws_secret_access_key: credentials");
        expectError(write("""
                [stores.shared]
                kind = "s3"
                endpoint = "http://user:pass@127.0.0.1:9000"
                region = "us-east-1"
                bucket = "b"
                """), "stores.shared.endpoint: credentials");
    }

    private Path write(String toml) throws IOException {
        return Files.writeString(Files.createTempFile(dir, "storage", ".toml"), toml);
    }

    /** Asserts that loading fails with a message naming the file and containing {@code expected}. */
    @Test
    void aUtf8ByteOrderMarkIsSkipped() throws IOException {
        Path file = dir.resolve("bom.toml");
        Files.write(file, ("\ufeff[stores.a]\nkind = \"local\"\nroot = \"/x\"\n").getBytes(StandardCharsets.UTF_8));
        assertThat(StorageConfig.load(file).defaultStore().name()).isEqualTo("a");
    }

    @Test
    void aFileThatIsNotUtf8SaysWhatOrWhere() throws IOException {
        Path wide = dir.resolve("wide.toml");
        Files.write(wide, "[stores.a]\n".getBytes(StandardCharsets.UTF_16));
        expectError(
                        wide,
                        ":1:1: is UTF-16 (big-endian) text (it starts with the byte order mark FE FF); save it as"
                                + " UTF-8")
                .hasMessageNotContaining("Invalid UTF-8");
        Path latin1 = dir.resolve("latin1.toml");
        Files.write(
                latin1, "[stores.a]\nkind = \"local\"\nroot = \"/caf\u00e9\"\n".getBytes(StandardCharsets.ISO_8859_1));
        expectError(latin1, ":3:13: bytes are not valid UTF-8 (byte 0xe9 at byte offset 12 of the line)");
    }

    @Test
    void nestingTooDeepIsReportedWhereInPlainWords() throws IOException {
        // "x = " is 4 characters; the document, stores and a are levels 1 to 3, so the 998th bracket (column 1002)
        // is level 1001.
        Path file =
                write("[stores.a]\nkind = \"local\"\nroot = \"/x\"\nx = " + "[".repeat(1500) + "]".repeat(1500) + "\n");
        expectError(file, ":4:1002: not valid TOML: nested deeper than 1000 levels; flatten it")
                .hasMessageNotContaining("StreamReadConstraints");
        // Over one line too: the place is found whatever the line.
        Path inline = write("a = " + "{b = ".repeat(1200) + "1" + "}".repeat(1200) + "\n");
        expectError(inline, ":1:").hasMessageContaining("nested deeper than 1000 levels");
    }

    private static AbstractThrowableAssert<?, ? extends Throwable> expectError(Path file, String expected) {
        return assertThatThrownBy(() -> StorageConfig.load(file))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageStartingWith(
                        "storage config " + file.toAbsolutePath().normalize())
                .hasMessageContaining(expected);
    }
}
