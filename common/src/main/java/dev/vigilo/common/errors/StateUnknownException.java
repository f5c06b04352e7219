package dev.vigilo.common.errors;

/** A commit was attempted and its outcome is unknown (the connection broke after the request was sent); the message says how to find out. Kind {@link ErrorKind#STATE_UNKNOWN}. */
public class StateUnknownException extends VigiloException {
    private static final long serialVersionUID = 1L;

    public StateUnknownException(String message) {
        super(ErrorKind.STATE_UNKNOWN, message);
    }

    public StateUnknownException(String message, Throwable cause) {
        super(ErrorKind.STATE_UNKNOWN, message, cause);
    }
}
