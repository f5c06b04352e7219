package dev.vigilo.dataset;

/** No finalized dataset has the given upload id. */
public final class DatasetNotFoundException extends DatasetException {
    private static final long serialVersionUID = 1L;

    public DatasetNotFoundException(String uploadId) {
        super("no finalized dataset has upload id " + uploadId + " (see `vigilo dataset list`)");
    }
}
