package dev.vigilo.dataset;

import dev.vigilo.storage.ObjectStore;
import dev.vigilo.storage.ObjectStores;
import dev.vigilo.storage.S3ProxyFixture;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;

class S3DatasetCatalogTest extends DatasetCatalogContract {
    private S3ProxyFixture s3;

    @BeforeAll
    void startS3() throws Exception {
        s3 = S3ProxyFixture.start();
    }

    @AfterAll
    void stopS3() throws Exception {
        s3.close();
    }

    @Override
    protected ObjectStore newStore() {
        return ObjectStores.open(s3.spec("run-" + UUID.randomUUID()));
    }

    @AfterEach
    void closeStore() {
        store.close();
    }
}
