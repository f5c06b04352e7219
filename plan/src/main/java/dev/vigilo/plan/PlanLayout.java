package dev.vigilo.plan;

import dev.vigilo.storage.ObjectKey;
import java.util.UUID;

/**
 * Object keys and the index bounds of a plan (docs/formats/plan-layout.md; its shape: {@link PlanShape}). Keys are fixed names under the
 * run's prefix rather than content addresses: a replay that produces different bytes for the same logical file then
 * hits the store's create-only conflict instead of silently writing a second version.
 */
final class PlanLayout {
    /** Entries per chunk index document, at most. */
    static final int INDEX_MAX_ENTRIES = 512;
    /** Bytes per chunk index document, at most. */
    static final int INDEX_MAX_BYTES = 256 * 1024;
    /** Chunk index levels, at most. */
    static final int INDEX_MAX_LEVELS = 8;
    /** Version of every plan format written by this build. */
    static final int FORMAT_VERSION = 1;

    private PlanLayout() {}

    static String prefix(UUID runId) {
        return "plans/" + runId + "/";
    }

    static ObjectKey chunk(UUID runId, long chunkIndex) {
        return ObjectKey.of(prefix(runId) + "chunks/" + ObjectKey.zeroPadded(chunkIndex, 10) + ".json");
    }

    static ObjectKey index(UUID runId, int level, long seq) {
        return ObjectKey.of(prefix(runId) + "index/" + level + "-" + ObjectKey.zeroPadded(seq, 10) + ".json");
    }

    static ObjectKey gate(UUID runId, int gateIndex) {
        return ObjectKey.of(prefix(runId) + "gates/" + ObjectKey.zeroPadded(gateIndex, 2) + ".json");
    }

    static ObjectKey configuration(UUID runId) {
        return ObjectKey.of(prefix(runId) + "configuration.json");
    }

    static ObjectKey manifest(UUID runId) {
        return ObjectKey.of(prefix(runId) + "manifest.json");
    }
}
