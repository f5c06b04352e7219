package dev.vigilo.dataset;

/**
 * Base of the dataset module's errors. Subclasses: {@link InvalidDatasetException} (the input file is not a valid
 * dataset; nothing was stored), {@link DatasetNotFoundException}, {@link DatasetDamagedException} (stored files
 * fail verification). Storage and control-database failures surface as their own modules' exceptions.
 */
public class DatasetException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public DatasetException(String message) {
        super(message);
    }

    public DatasetException(String message, Throwable cause) {
        super(message, cause);
    }
}
