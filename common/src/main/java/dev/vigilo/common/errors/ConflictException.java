package dev.vigilo.common.errors;

/** The request conflicts with durable state or another live owner (for example an id already naming other content, or a lease held by another process). Kind {@link ErrorKind#CONFLICT}. */
public class ConflictException extends VigiloException {
    private static final long serialVersionUID = 1L;

    public ConflictException(String message) {
        super(ErrorKind.CONFLICT, message);
    }

    public ConflictException(String message, Throwable cause) {
        super(ErrorKind.CONFLICT, message, cause);
    }
}
