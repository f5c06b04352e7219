package dev.vigilo.cli;

import java.util.UUID;
import picocli.CommandLine.Parameters;

/**
 * The id a command is about, its first parameter, declared once per kind: every command about one run mixes in
 * {@link Run} ({@code @Mixin IdParameters.Run runId;}), every command about one dataset {@link Upload}, so the
 * parameter has one label, one description and one check ({@link Run#id}: the canonical form or exit 3).
 */
final class IdParameters {
    private IdParameters() {}

    /** {@code RUN_ID}. */
    static final class Run {
        @Parameters(index = "0", paramLabel = "RUN_ID", description = "The run id.")
        String text;

        /** The run id as typed: canonical or refused (exit 3). */
        UUID id() {
            return CommandSupport.runId(text, "RUN_ID");
        }
    }

    /** {@code UPLOAD_ID}. */
    static final class Upload {
        @Parameters(index = "0", paramLabel = "UPLOAD_ID", description = "The dataset's upload id.")
        String text;

        /** The upload id as typed: canonical or refused (exit 3). */
        UUID id() {
            return CommandSupport.uploadId(text, "UPLOAD_ID");
        }
    }
}
