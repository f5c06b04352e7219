package dev.vigilo.datagen;

import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * One failed attempt of a step: recorded as a FAILED event (error_type, error_dump, traceback, and as query tags
 * what the attempt's requests used, for chat steps).
 */
final class StepFailure extends Exception {
    final String errorType;
    final String dump;
    final String traceback;
    /** Requests the attempt sent (chat steps), 0 otherwise. */
    final int requests;
    /** The attempt's usage tags (a chat step whose answer was rejected still used tokens), or null. */
    final ObjectNode tags;

    StepFailure(String errorType, String dump, String traceback) {
        this(errorType, dump, traceback, 0, null);
    }

    private StepFailure(String errorType, String dump, String traceback, int requests, ObjectNode tags) {
        super(errorType + ": " + dump);
        this.errorType = errorType;
        this.dump = dump;
        this.traceback = traceback;
        this.requests = requests;
        this.tags = tags;
    }

    /** The same failure after {@code n} requests. */
    StepFailure withRequests(int n) {
        return new StepFailure(errorType, dump, traceback, n, tags);
    }

    /** The same failure with query tags for its FAILED event. */
    StepFailure withTags(ObjectNode t) {
        return new StepFailure(errorType, dump, traceback, requests, t);
    }
}
