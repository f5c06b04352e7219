package dev.vigilo.common.errors;

/** A named thing does not exist; the message names it and says where it was looked for. Kind {@link ErrorKind#NOT_FOUND}. */
public class NotFoundException extends VigiloException {
    private static final long serialVersionUID = 1L;

    public NotFoundException(String message) {
        super(ErrorKind.NOT_FOUND, message);
    }

    public NotFoundException(String message, Throwable cause) {
        super(ErrorKind.NOT_FOUND, message, cause);
    }
}
