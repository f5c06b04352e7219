package dev.vigilo.plan;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigilo.control.ControlDatabase;
import dev.vigilo.control.ControlSettings;
import dev.vigilo.control.TestPostgres;
import dev.vigilo.dataset.DatasetCatalog;
import dev.vigilo.dataset.UploadProgress;
import dev.vigilo.dataset.UploadRequest;
import dev.vigilo.storage.Deadline;
import dev.vigilo.storage.ObjectInfo;
import dev.vigilo.storage.ObjectRef;
import dev.vigilo.storage.ObjectStore;
import dev.vigilo.storage.ObjectStores;
import dev.vigilo.storage.S3ProxyFixture;
import dev.vigilo.storage.StorageConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.TreeMap;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Preparation against an S3 store (s3proxy), and byte-identity with the same plan prepared on a local store. */
class S3PreparationTest {
    @Test
    void preparesOnS3AndMatchesALocalPlanByteForByte(@TempDir Path dir) throws Exception {
        UUID upload = UUID.randomUUID();
        UUID run = UUID.randomUUID();
        try (S3ProxyFixture s3 = S3ProxyFixture.start();
                PlanFixture local = new PlanFixture(dir.resolve("local"), 1_234, upload);
                ControlDatabase control =
                        ControlDatabase.open(new ControlSettings.Jdbc(TestPostgres.newDatabaseUrl()))) {
            Path config = dir.resolve("storage.toml");
            Files.writeString(config, """
                    [stores.shared]
                    kind = "s3"
                    endpoint = "%s"
                    region = "us-east-1"
                    bucket = "%s"
                    prefix = "plan-test"
                    path_style = true
                    """.formatted(s3.endpoint(), S3ProxyFixture.BUCKET));
            StorageConfig storage = StorageConfig.load(config);
            Path source = dir.resolve("cases.jsonl");
            PlanFixture.writeCases(source, 1_234);
            try (ObjectStore store = ObjectStores.open(storage.defaultStore())) {
                new DatasetCatalog(control.jdbi())
                        .upload(
                                new UploadRequest(source, Optional.of("fixture"), Optional.of(upload)),
                                store,
                                UploadProgress.NONE);
                CreateResult r = new RunPreparation(control.jdbi(), storage, PlanFixture.fast())
                        .create(new CreateRequest(
                                ProfileInput.file(writeProfile(dir)), upload, Optional.of(run), false));
                assertThat(r.status()).isEqualTo(RunState.CREATING);
                local.preparation(PlanFixture.fast())
                        .create(new CreateRequest(
                                ProfileInput.inline(PlanFixture.PROFILE), upload, Optional.of(run), false));
                TreeMap<String, byte[]> remote = new TreeMap<>();
                for (ObjectInfo info : store.list(PlanLayout.prefix(run), Deadline.after(Duration.ofSeconds(30)))) {
                    byte[] bytes = Files.readAllBytes(
                            local.storeRoot.resolve(info.key().value()));
                    // Read through the S3 store, verifying against the local file's digest.
                    remote.put(
                            info.key().value(),
                            store.read(ObjectRef.of(info.key(), bytes), Deadline.after(Duration.ofSeconds(30))));
                }
                PreparationTest.assertIdentical(local.planFiles(run), remote);
                assertThat(new RunStatusReader(control.jdbi()).status(run).shards())
                        .isEqualTo(new RunStatusReader(local.control.jdbi())
                                .status(run)
                                .shards());
            }
        }
    }

    private static Path writeProfile(Path dir) throws Exception {
        Path p = dir.resolve("profile.json");
        Files.write(p, ProfileJson.encode(ProfileParser.parse(PlanFixture.PROFILE)));
        return p;
    }
}
