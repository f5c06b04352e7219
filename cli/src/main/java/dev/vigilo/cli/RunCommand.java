package dev.vigilo.cli;

import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** {@code vigilo run}: runs of an agent over a finalized dataset. */
@Command(
        name = "run",
        mixinStandardHelpOptions = true,
        description = "Prepare runs as immutable, verified execution plans, follow their execution, read their results"
                + " and transcripts, compare two runs, and cancel, pause, resume or move them.",
        subcommands = {
            RunCreateCommand.class,
            RunStatusCommand.class,
            RunGroupsCommand.class,
            RunWatchCommand.class,
            RunResultsCommand.class,
            RunTranscriptCommand.class,
            RunCompareCommand.class,
            RunCancelCommand.class,
            RunPauseCommand.Pause.class,
            RunPauseCommand.Resume.class,
            RunRerunCommand.class,
            RunReviewCommand.Review.class,
            RunReviewCommand.Reviews.class,
            RunMoveShardCommand.class
        })
final class RunCommand implements Runnable {
    @Spec
    CommandSpec spec;

    @Override
    public void run() {
        spec.commandLine().usage(spec.commandLine().getOut());
    }
}
