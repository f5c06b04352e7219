package dev.vigilo.web;

import dev.vigilo.common.errors.VigiloException;
import io.javalin.http.HttpStatus;

/** The HTTP status of each error kind: the shared taxonomy (docs/cli.md, "Exit codes") mapped once. */
final class HttpErrors {
    private HttpErrors() {}

    static HttpStatus status(VigiloException e) {
        return switch (e.kind()) {
            case INVALID_INPUT -> HttpStatus.BAD_REQUEST;
            case NOT_FOUND -> HttpStatus.NOT_FOUND;
            case CONFLICT, FENCED -> HttpStatus.CONFLICT;
            case DAMAGED -> HttpStatus.INTERNAL_SERVER_ERROR;
            case UNAVAILABLE, STATE_UNKNOWN -> HttpStatus.SERVICE_UNAVAILABLE;
            case CANCELLED -> HttpStatus.SERVICE_UNAVAILABLE;
        };
    }
}
