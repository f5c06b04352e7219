package dev.vigilo.datagen;

/** One failed attempt of a step: recorded as a FAILED event (error_type, error_dump, traceback). */
final class StepFailure extends Exception {
    final String errorType;
    final String dump;
    final String traceback;

    StepFailure(String errorType, String dump, String traceback) {
        super(errorType + ": " + dump);
        this.errorType = errorType;
        this.dump = dump;
        this.traceback = traceback;
    }
}
