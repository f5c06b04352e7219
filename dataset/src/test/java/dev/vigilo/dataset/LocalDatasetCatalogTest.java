package dev.vigilo.dataset;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.storage.ObjectInfo;
import dev.vigilo.storage.ObjectStore;
import dev.vigilo.storage.ObjectStores;
import dev.vigilo.storage.StoreSpec;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class LocalDatasetCatalogTest extends DatasetCatalogContract {
    private Path root;

    @Override
    protected ObjectStore newStore() {
        root = dir.resolve("objects-" + UUID.randomUUID());
        return ObjectStores.open(new StoreSpec.Local("local", root));
    }

    @AfterEach
    void closeStore() {
        store.close();
    }

    private Path fileOf(ObjectInfo info) {
        return root.resolve(info.key().value());
    }

    @Test
    void aDamagedCaseFileIsReportedByKey() throws IOException {
        DatasetEntry entry =
                catalog.upload(UploadRequest.of(writeCases("tamper.jsonl", 3000)), store, UploadProgress.NONE);
        ObjectInfo victim = storedObjects("datasets/cases/").get(1);
        byte[] bytes = Files.readAllBytes(fileOf(victim));
        bytes[bytes.length / 2] ^= 0x01;
        Files.write(fileOf(victim), bytes);

        assertThatThrownBy(() -> DatasetReader.open(entry, store).verify())
                .isInstanceOf(DatasetDamagedException.class)
                .satisfies(e -> assertThat(((DatasetDamagedException) e).key()).isEqualTo(victim.key()));
    }

    @Test
    void aMissingIndexDocumentIsReportedByKey() throws IOException {
        DatasetEntry entry = catalog.upload(UploadRequest.of(writeCases("gone.jsonl", 10)), store, UploadProgress.NONE);
        Files.delete(fileOf(storedObjects("datasets/index/").get(0)));
        assertThatThrownBy(() -> DatasetReader.open(entry, store).verify())
                .isInstanceOf(DatasetDamagedException.class)
                .hasMessageContaining("missing")
                .satisfies(e -> assertThat(((DatasetDamagedException) e).key())
                        .isEqualTo(entry.indexRoot().key()));
    }

    @Test
    void readingThroughAStoreWithAnotherBindingIsRefused() throws IOException {
        DatasetEntry entry = catalog.upload(UploadRequest.of(writeCases("bound.jsonl", 5)), store, UploadProgress.NONE);
        try (ObjectStore other = ObjectStores.open(new StoreSpec.Local("other", dir.resolve("elsewhere")))) {
            assertThatThrownBy(() -> DatasetReader.open(entry, other))
                    .isInstanceOf(InvalidInputException.class)
                    .hasMessageContaining(entry.storage().value());
        }
    }

    @Test
    void pagesWalkTheListInOrder() throws IOException {
        for (int i = 0; i < 5; i++) {
            catalog.upload(UploadRequest.of(writeCases("page-" + i + ".jsonl", 3 + i)), store, UploadProgress.NONE);
        }
        java.util.List<DatasetEntry> all = catalog.list();
        java.util.List<DatasetEntry> walked = new java.util.ArrayList<>();
        java.util.Optional<DatasetEntry> after = java.util.Optional.empty();
        while (true) {
            java.util.List<DatasetEntry> page = catalog.page(after, 2);
            assertThat(page).hasSizeLessThanOrEqualTo(2);
            if (page.isEmpty()) {
                break;
            }
            walked.addAll(page);
            after = java.util.Optional.of(page.get(page.size() - 1));
        }
        assertThat(walked).isEqualTo(all);
        assertThat(all.size()).isGreaterThanOrEqualTo(5);
        assertThatThrownBy(() -> catalog.page(java.util.Optional.empty(), 0))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
