package dev.vigilo.dataset;

/**
 * Receives upload progress. An upload reads its file twice: {@link Phase#VALIDATE} checks every line before
 * anything is stored, {@link Phase#STORE} writes case files and the index. Called from the uploading thread.
 */
@FunctionalInterface
public interface UploadProgress {
    enum Phase {
        VALIDATE,
        STORE
    }

    /**
     * @param phase      the current pass
     * @param bytesDone  bytes of the source read in this pass
     * @param bytesTotal the source size
     * @param cases      cases seen in this pass
     */
    void update(Phase phase, long bytesDone, long bytesTotal, long cases);

    UploadProgress NONE = (phase, done, total, cases) -> {};
}
