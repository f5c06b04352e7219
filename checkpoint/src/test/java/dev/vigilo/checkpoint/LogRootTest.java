package dev.vigilo.checkpoint;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.storage.StorageConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.function.Supplier;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** How a durable root as a user writes it resolves through the storage configuration. */
class LogRootTest {
    @TempDir
    Path dir;

    private Supplier<StorageConfig> config;

    @BeforeEach
    void writeConfig() throws Exception {
        Path file = dir.resolve("storage.toml");
        Files.writeString(file, """
                default = "disk"

                [stores.disk]
                kind = "local"
                root = "objects"

                [stores.team]
                kind = "s3"
                endpoint = "http://127.0.0.1:9000"
                region = "eu-west-1"
                bucket = "data"
                prefix = "team"
                path_style = true

                [stores.whole]
                kind = "s3"
                endpoint = "http://127.0.0.1:9000"
                region = "eu-west-1"
                bucket = "data"
                path_style = true
                """);
        config = () -> StorageConfig.load(file);
    }

    @Test
    void aNamedS3StoreIsItsBucketAndPrefixWithAnOptionalSubPrefix() {
        LogRoot root = LogRoot.resolve("store:team", config);
        assertThat(root.s3Store().name()).isEqualTo("team");
        assertThat(root.uri()).isEqualTo("s3://data/team");

        LogRoot sub = LogRoot.resolve("store:team/runs/2024", config);
        assertThat(sub.prefix()).isEqualTo("runs/2024");
        assertThat(sub.uri()).isEqualTo("s3://data/team/runs/2024");
        assertThat(new LogLocation(sub, "p", "e").experimentKey()).isEqualTo("team/runs/2024/datagen_checkpoints/p/e");
    }

    @Test
    void aNamedLocalStoreIsADirectory() {
        LogRoot root = LogRoot.resolve("store:disk/dg", config);
        assertThat(root.isLocal()).isTrue();
        assertThat(root.directory()).isEqualTo(dir.resolve("objects/dg"));
    }

    @Test
    void anS3UrlMapsToTheStoreWithTheLongestMatchingPrefix() {
        LogRoot inTeam = LogRoot.resolve("s3://data/team/dg/", config);
        assertThat(inTeam.s3Store().name()).isEqualTo("team");
        assertThat(inTeam.prefix()).isEqualTo("dg");
        assertThat(inTeam.uri()).isEqualTo("s3://data/team/dg");

        LogRoot elsewhere = LogRoot.resolve("s3://data/teamx", config);
        assertThat(elsewhere.s3Store().name()).isEqualTo("whole");
        assertThat(elsewhere.prefix()).isEqualTo("teamx");
    }

    @Test
    void anS3UrlNoStoreHoldsIsAnErrorNamingTheConfiguredStores() {
        assertThatThrownBy(() -> LogRoot.resolve("s3://other-bucket/x", config))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("s3://other-bucket/x")
                .hasMessageContaining("team = s3:http://127.0.0.1:9000/data/team")
                .hasMessageContaining("disk = local:")
                .hasMessageContaining("bucket = \"other-bucket\"");
    }

    @Test
    void anUnknownStoreNameIsAnErrorNamingTheConfiguredStores() {
        assertThatThrownBy(() -> LogRoot.resolve("store:nope", config))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("no store named \"nope\"")
                .hasMessageContaining("whole = s3:");
        assertThatThrownBy(() -> LogRoot.resolve("store:team/../x", config))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("not a key prefix");
    }

    @Test
    void twoStoresOfOneBucketAndPrefixAtDifferentEndpointsAreAmbiguous() throws Exception {
        Path file = dir.resolve("two.toml");
        Files.writeString(file, """
                default = "a"
                [stores.a]
                kind = "s3"
                endpoint = "http://127.0.0.1:9000"
                region = "us-east-1"
                bucket = "b"
                [stores.b]
                kind = "s3"
                endpoint = "http://127.0.0.1:9001"
                region = "us-east-1"
                bucket = "b"
                """);
        assertThatThrownBy(() -> LogRoot.resolve("s3://b/x", () -> StorageConfig.load(file)))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("matches several stores")
                .hasMessageContaining("store:NAME");
    }

    @Test
    void aPathIsALocalDirectoryAndNeedsNoConfiguration() {
        Supplier<StorageConfig> unreadable = () -> {
            throw new AssertionError("a local path must not read the storage configuration");
        };
        LogRoot root = LogRoot.resolve(dir.resolve("d").toString(), unreadable);
        assertThat(root.isLocal()).isTrue();
        assertThat(root.directory()).isEqualTo(dir.resolve("d"));
        assertThatThrownBy(() -> LogRoot.resolve("gs://bucket/x", unreadable))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("neither a local directory");
    }
}
