package dev.vigilo.dataset;

/** A caller-chosen upload id already names a dataset with other content or another name. Nothing was stored. */
public final class DatasetConflictException extends DatasetException {
    private static final long serialVersionUID = 1L;

    public DatasetConflictException(String message) {
        super(message);
    }
}
