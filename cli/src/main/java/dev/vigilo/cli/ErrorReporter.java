package dev.vigilo.cli;

import dev.vigilo.checkpoint.CheckpointException;
import dev.vigilo.checkpoint.FencingViolationException;
import dev.vigilo.checkpoint.LogFormatException;
import dev.vigilo.checkpoint.LogNotFoundException;
import dev.vigilo.checkpoint.WriterFencedException;
import dev.vigilo.control.ControlDatabaseException;
import dev.vigilo.datagen.PipelineDefinitionException;
import dev.vigilo.dataset.DatasetConflictException;
import dev.vigilo.dataset.DatasetDamagedException;
import dev.vigilo.dataset.DatasetException;
import dev.vigilo.dataset.DatasetNotFoundException;
import dev.vigilo.dataset.InvalidDatasetException;
import dev.vigilo.plan.LeaseConflictException;
import dev.vigilo.plan.LeaseFencedException;
import dev.vigilo.plan.PlanCancelledException;
import dev.vigilo.plan.PlanDamagedException;
import dev.vigilo.plan.PlanException;
import dev.vigilo.plan.PlanValidationException;
import dev.vigilo.plan.RunNotFoundException;
import dev.vigilo.sessionlog.CorruptSessionLogException;
import dev.vigilo.sessionlog.FencedWriterException;
import dev.vigilo.sessionlog.SessionLogIOException;
import dev.vigilo.sessionlog.UnsupportedSessionFormatException;
import dev.vigilo.storage.ObjectConflictException;
import dev.vigilo.storage.StorageCancelledException;
import dev.vigilo.storage.StorageConfigException;
import dev.vigilo.storage.StorageException;
import picocli.CommandLine;

import java.io.PrintWriter;
import java.io.UncheckedIOException;

/**
 * The one place that turns an exception into a message on stderr and an {@link ExitCode}. Known errors print
 * their message (which says what, where and what to do); unknown ones are bugs and print a stack trace only with
 * {@code --verbose}.
 */
final class ErrorReporter implements CommandLine.IExecutionExceptionHandler {
    private final VigiloCommand root;

    ErrorReporter(VigiloCommand root) {
        this.root = root;
    }

    @Override
    public int handleExecutionException(Exception ex, CommandLine cmd, CommandLine.ParseResult parseResult) {
        PrintWriter err = cmd.getErr();
        int code = exitCode(ex);
        String prefix = code == ExitCode.INTERNAL ? "vigilo: internal error: " : "vigilo: error: ";
        err.println(prefix + (ex.getMessage() == null ? ex.getClass().getName() : ex.getMessage()));
        if (root.verbose() || code == ExitCode.INTERNAL) {
            if (root.verbose()) {
                ex.printStackTrace(err);
            } else {
                err.println("Run again with --verbose for details, and please report it.");
            }
        }
        return code;
    }

    static int exitCode(Throwable ex) {
        if (ex instanceof PlanException) {
            return planExitCode((PlanException) ex);
        }
        if (ex instanceof CorruptSessionLogException || ex instanceof UnsupportedSessionFormatException) {
            return ExitCode.FAILED;
        }
        if (ex instanceof FencedWriterException) {
            return ExitCode.CONFLICT;
        }
        if (ex instanceof SessionLogIOException) {
            return ExitCode.UNAVAILABLE;
        }
        if (ex instanceof PipelineDefinitionException || ex instanceof LogNotFoundException) {
            return ExitCode.INVALID_INPUT;
        }
        if (ex instanceof WriterFencedException || ex instanceof FencingViolationException) {
            return ExitCode.CONFLICT;
        }
        if (ex instanceof LogFormatException) {
            return ExitCode.FAILED;
        }
        if (ex instanceof CheckpointException) {
            return ExitCode.UNAVAILABLE;
        }
        if (ex instanceof InvalidDatasetException || ex instanceof DatasetNotFoundException
                || ex instanceof StorageConfigException || ex instanceof InvalidArgumentException) {
            return ExitCode.INVALID_INPUT;
        }
        if (ex instanceof DatasetDamagedException) {
            return ExitCode.FAILED;
        }
        if (ex instanceof ObjectConflictException) {
            return ExitCode.CONFLICT;
        }
        if (ex instanceof StorageCancelledException) {
            return ExitCode.INTERRUPTED;
        }
        if (ex instanceof DatasetConflictException) {
            return ExitCode.CONFLICT;
        }
        if (ex instanceof DatasetException) {
            return ExitCode.INVALID_INPUT;
        }
        if (ex instanceof StorageException || ex instanceof ControlDatabaseException
                || ex instanceof UncheckedIOException) {
            return ExitCode.UNAVAILABLE;
        }
        return ExitCode.INTERNAL;
    }

    private static int planExitCode(PlanException ex) {
        if (ex instanceof PlanValidationException || ex instanceof RunNotFoundException) {
            return ExitCode.INVALID_INPUT;
        }
        if (ex instanceof LeaseConflictException || ex instanceof LeaseFencedException) {
            return ExitCode.CONFLICT;
        }
        if (ex instanceof PlanDamagedException) {
            return ExitCode.FAILED;
        }
        if (ex instanceof PlanCancelledException) {
            return ExitCode.INTERRUPTED;
        }
        // PlanStateUnknownException and plain PlanException: the control database or storage failed; repeat.
        return ExitCode.UNAVAILABLE;
    }
}
