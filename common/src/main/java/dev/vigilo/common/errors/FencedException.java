package dev.vigilo.common.errors;

/** This writer's authority (lease generation, writer epoch) was taken over; the operation stopped and none of its later writes count. Kind {@link ErrorKind#FENCED}. */
public class FencedException extends VigiloException {
    private static final long serialVersionUID = 1L;

    public FencedException(String message) {
        super(ErrorKind.FENCED, message);
    }

    public FencedException(String message, Throwable cause) {
        super(ErrorKind.FENCED, message, cause);
    }
}
