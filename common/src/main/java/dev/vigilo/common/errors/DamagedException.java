package dev.vigilo.common.errors;

/** Stored bytes are missing or differ from the reference (key, length, SHA-256) that names them. Kind {@link ErrorKind#DAMAGED}. */
public class DamagedException extends VigiloException {
    private static final long serialVersionUID = 1L;

    public DamagedException(String message) {
        super(ErrorKind.DAMAGED, message);
    }

    public DamagedException(String message, Throwable cause) {
        super(ErrorKind.DAMAGED, message, cause);
    }
}
