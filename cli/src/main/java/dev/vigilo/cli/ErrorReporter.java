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
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.util.List;
import picocli.CommandLine;

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

    /**
     * Exception types and their exit codes, most specific first: the first rule whose type matches wins, so a
     * module's specific errors come before the base class that catches the rest of that module.
     */
    private static final List<Rule> RULES = List.of(
            // run preparation
            new Rule(ExitCode.INVALID_INPUT, PlanValidationException.class, RunNotFoundException.class),
            new Rule(ExitCode.CONFLICT, LeaseConflictException.class, LeaseFencedException.class),
            new Rule(ExitCode.FAILED, PlanDamagedException.class),
            new Rule(ExitCode.INTERRUPTED, PlanCancelledException.class),
            // PlanStateUnknownException and plain PlanException: the database or store failed; repeat the command.
            new Rule(ExitCode.UNAVAILABLE, PlanException.class),
            // session logs
            new Rule(ExitCode.FAILED, CorruptSessionLogException.class, UnsupportedSessionFormatException.class),
            new Rule(ExitCode.CONFLICT, FencedWriterException.class),
            new Rule(ExitCode.UNAVAILABLE, SessionLogIOException.class),
            // data generation and its checkpoint log
            new Rule(ExitCode.INVALID_INPUT, PipelineDefinitionException.class, LogNotFoundException.class),
            new Rule(ExitCode.CONFLICT, WriterFencedException.class, FencingViolationException.class),
            new Rule(ExitCode.FAILED, LogFormatException.class),
            new Rule(ExitCode.UNAVAILABLE, CheckpointException.class),
            // datasets, storage, control database, command arguments
            new Rule(
                    ExitCode.INVALID_INPUT,
                    InvalidDatasetException.class,
                    DatasetNotFoundException.class,
                    StorageConfigException.class,
                    InvalidArgumentException.class),
            new Rule(ExitCode.FAILED, DatasetDamagedException.class),
            new Rule(ExitCode.CONFLICT, ObjectConflictException.class, DatasetConflictException.class),
            new Rule(ExitCode.INTERRUPTED, StorageCancelledException.class),
            new Rule(ExitCode.INVALID_INPUT, DatasetException.class),
            new Rule(
                    ExitCode.UNAVAILABLE,
                    StorageException.class,
                    ControlDatabaseException.class,
                    UncheckedIOException.class));

    static int exitCode(Throwable ex) {
        for (Rule rule : RULES) {
            if (rule.matches(ex)) {
                return rule.code();
            }
        }
        return ExitCode.INTERNAL;
    }

    private record Rule(int code, List<Class<? extends Throwable>> types) {
        @SafeVarargs
        Rule(int code, Class<? extends Throwable>... types) {
            this(code, List.of(types));
        }

        boolean matches(Throwable ex) {
            return types.stream().anyMatch(t -> t.isInstance(ex));
        }
    }
}
