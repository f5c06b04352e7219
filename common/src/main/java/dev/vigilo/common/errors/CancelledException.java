package dev.vigilo.common.errors;

/** The operation stopped on request (Ctrl-C, cancellation, interruption); what it committed before stays. Kind {@link ErrorKind#CANCELLED}. */
public class CancelledException extends VigiloException {
    private static final long serialVersionUID = 1L;

    public CancelledException(String message) {
        super(ErrorKind.CANCELLED, message);
    }

    public CancelledException(String message, Throwable cause) {
        super(ErrorKind.CANCELLED, message, cause);
    }
}
