package dev.vigilo.dataset;

import java.util.Objects;

/**
 * Where a dataset came from when Vigilo made it from a datagen experiment ({@code vigilo datagen export
 * --to-dataset}): recorded with its catalog entry, in the same transaction, and never changed.
 *
 * @param durableRoot the experiment's durable root, as configured (a path or an {@code s3://} location; never holds
 *                    credentials)
 * @param pipeline    the pipeline's name
 * @param experiment  the experiment's name
 * @param logVersion  the checkpoint log's base table version the export read (its snapshot also holds the shard
 *                    generations flushed by then)
 * @param items       the completed leaf items exported, one case each
 * @param map         how the items' fields became cases
 */
public record DatasetOrigin(
        String durableRoot, String pipeline, String experiment, long logVersion, long items, CaseMap map) {
    public DatasetOrigin {
        Objects.requireNonNull(durableRoot, "durableRoot");
        Objects.requireNonNull(pipeline, "pipeline");
        Objects.requireNonNull(experiment, "experiment");
        Objects.requireNonNull(map, "map");
        if (logVersion < 0 || items <= 0) {
            throw new IllegalArgumentException("log version >= 0 and items > 0, got " + logVersion + ", " + items);
        }
    }
}
