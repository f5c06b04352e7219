package dev.vigilo.cli;

/** A command argument is well-formed for picocli but invalid for Vigilo (for example not a UUID). Exit 3. */
final class InvalidArgumentException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    InvalidArgumentException(String message) {
        super(message);
    }
}
