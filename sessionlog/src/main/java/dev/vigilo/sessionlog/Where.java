package dev.vigilo.sessionlog;

/**
 * Where a record was read, for error messages and offsets: the zstd frame that held it, the line of an
 * uncompressed log, or a batch being appended (no offset yet).
 *
 * @param unit   "frame", "line" or "batch"
 * @param offset byte offset of the frame or line in the file, or -1
 */
record Where(String unit, long offset) {
    /** A batch a writer is about to append. */
    static final Where APPEND = new Where("batch", -1);

    static Where frame(long offset) {
        return new Where("frame", offset);
    }

    static Where line(long offset) {
        return new Where("line", offset);
    }

    /** @return e.g. "frame at byte 57", or "appended batch" */
    @Override
    public String toString() {
        return offset < 0 ? "appended " + unit : unit + " at byte " + offset;
    }
}
