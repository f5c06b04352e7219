package dev.vigilo.common.errors;

/** The input is wrong; nothing durable changed. The message names the input, the place (FILE:LINE:COLUMN, option or key) and what to do. Kind {@link ErrorKind#INVALID_INPUT}. */
public class InvalidInputException extends VigiloException {
    private static final long serialVersionUID = 1L;

    public InvalidInputException(String message) {
        super(ErrorKind.INVALID_INPUT, message);
    }

    public InvalidInputException(String message, Throwable cause) {
        super(ErrorKind.INVALID_INPUT, message, cause);
    }
}
