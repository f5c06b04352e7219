package dev.vigilo.dataset;

/**
 * The bounds of the dataset storage format (docs/formats/dataset.md). They are part of the format: a reader relies
 * on them to bound its memory, so changing one is a format change.
 */
public final class DatasetLimits {
    /** Largest accepted case line, in bytes (without its line ending). */
    public static final int MAX_CASE_BYTES = 8 * 1024 * 1024;
    /** A case file is closed before its records would exceed this many bytes (a larger single case goes alone). */
    public static final int CASE_FILE_TARGET_BYTES = 1024 * 1024;
    /** Most cases in one case file. */
    public static final int CASE_FILE_MAX_CASES = 1024;
    /** Most entries in one index document. */
    public static final int INDEX_MAX_ENTRIES = 512;
    /** Largest encoded index document, in bytes (512 entries of at most ~400 bytes fit). */
    public static final int INDEX_MAX_BYTES = 256 * 1024;
    /** Most index levels: level 0 references case files, level 7 is the highest possible root. */
    public static final int MAX_INDEX_LEVELS = 8;

    private DatasetLimits() {}
}
