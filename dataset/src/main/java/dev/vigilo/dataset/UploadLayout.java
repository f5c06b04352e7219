package dev.vigilo.dataset;

/**
 * How an upload cuts cases into files and fans out the index. {@link #DEFAULT} uses the format's bounds; smaller
 * values (tests) produce deeper trees of the same format, which every reader accepts.
 *
 * @param caseFileMaxCases    most cases per case file, 1..{@link DatasetLimits#CASE_FILE_MAX_CASES}
 * @param caseFileTargetBytes a case file is closed before its records would exceed this
 * @param indexMaxEntries     most entries per index document, 2..{@link DatasetLimits#INDEX_MAX_ENTRIES}
 */
record UploadLayout(int caseFileMaxCases, int caseFileTargetBytes, int indexMaxEntries) {
    static final UploadLayout DEFAULT = new UploadLayout(
            DatasetLimits.CASE_FILE_MAX_CASES, DatasetLimits.CASE_FILE_TARGET_BYTES, DatasetLimits.INDEX_MAX_ENTRIES);

    UploadLayout {
        if (caseFileMaxCases < 1 || caseFileMaxCases > DatasetLimits.CASE_FILE_MAX_CASES) {
            throw new IllegalArgumentException("caseFileMaxCases out of range: " + caseFileMaxCases);
        }
        if (caseFileTargetBytes < 1 || caseFileTargetBytes > DatasetLimits.CASE_FILE_TARGET_BYTES) {
            throw new IllegalArgumentException("caseFileTargetBytes out of range: " + caseFileTargetBytes);
        }
        if (indexMaxEntries < 2 || indexMaxEntries > DatasetLimits.INDEX_MAX_ENTRIES) {
            throw new IllegalArgumentException("indexMaxEntries out of range: " + indexMaxEntries);
        }
    }
}
