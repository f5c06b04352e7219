package dev.vigilo.dataset;

/**
 * Carries a source record's problem (found while mapping a CSV row or a JSON record onto a case, already at its line
 * of the file) through the upload passes, apart from the problems the passes find on the JSON lines themselves,
 * whose lines {@link UploadSource#relocate} may still have to move. The uploader throws {@link #problem()}.
 */
final class RecordProblem extends RuntimeException {
    private static final long serialVersionUID = 1L;

    RecordProblem(InvalidDatasetException problem) {
        super(problem.getMessage(), problem, false, false);
    }

    InvalidDatasetException problem() {
        return (InvalidDatasetException) getCause();
    }
}
