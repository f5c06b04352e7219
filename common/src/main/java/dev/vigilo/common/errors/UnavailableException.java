package dev.vigilo.common.errors;

/** A service failed or timed out (I/O error, network error, 5xx, deadline); retrying later may help. The message names the service. Kind {@link ErrorKind#UNAVAILABLE}. */
public class UnavailableException extends VigiloException {
    private static final long serialVersionUID = 1L;

    public UnavailableException(String message) {
        super(ErrorKind.UNAVAILABLE, message);
    }

    public UnavailableException(String message, Throwable cause) {
        super(ErrorKind.UNAVAILABLE, message, cause);
    }
}
