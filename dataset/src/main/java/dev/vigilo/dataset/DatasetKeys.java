package dev.vigilo.dataset;

import dev.vigilo.storage.ObjectKey;
import dev.vigilo.storage.Sha256;

/**
 * Where dataset files live in a store. Keys are content-addressed (derived from the file's SHA-256), so a re-run
 * of an interrupted upload recreates exactly the same keys with the same bytes, which the create-only store
 * accepts as idempotent; identical files shared by several uploads are stored once.
 */
final class DatasetKeys {
    private DatasetKeys() {}

    static ObjectKey caseFile(Sha256 sha256) {
        String hex = sha256.toHex();
        return ObjectKey.of("datasets/cases/" + hex.substring(0, 2) + "/" + hex + ".jsonl");
    }

    static ObjectKey indexDocument(Sha256 sha256) {
        String hex = sha256.toHex();
        return ObjectKey.of("datasets/index/" + hex.substring(0, 2) + "/" + hex + ".json");
    }
}
