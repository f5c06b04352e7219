package dev.vigilo.dataset;

import dev.vigilo.control.ControlDatabase;
import dev.vigilo.control.ControlSettings;
import dev.vigilo.storage.ObjectStore;
import dev.vigilo.storage.ObjectStores;
import dev.vigilo.storage.StoreSpec;
import java.nio.file.Path;
import java.util.Optional;
import java.util.UUID;

/**
 * A real upload process for crash tests: {@code UploadMain JDBC_URL STORE_ROOT FILE UPLOAD_ID} uploads FILE into a
 * local store under the given upload id and prints the upload id.
 */
public final class UploadMain {
    private UploadMain() {}

    public static void main(String[] args) {
        try (ControlDatabase db = ControlDatabase.open(new ControlSettings.Jdbc(args[0]));
                ObjectStore store = ObjectStores.open(new StoreSpec.Local("local", Path.of(args[1])))) {
            DatasetEntry entry = new DatasetCatalog(db.jdbi())
                    .upload(
                            new UploadRequest(
                                    Path.of(args[2]), Optional.of("crash"), Optional.of(UUID.fromString(args[3]))),
                            store,
                            UploadProgress.NONE);
            System.out.println(entry.uploadId());
        }
    }
}
