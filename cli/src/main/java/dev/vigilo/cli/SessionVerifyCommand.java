package dev.vigilo.cli;

import dev.vigilo.sessionlog.SessionVerifier;
import dev.vigilo.sessionlog.VerifyReport;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code vigilo session verify FILE}: exit 0 ACCEPT, 1 REJECT. */
@Command(
        name = "verify",
        mixinStandardHelpOptions = true,
        description = {
            "Read a session log as the published reader does, plus Vigilo's commit protocol "
                    + "(P1 commit records, P2 manifest): ACCEPT (exit 0) or REJECT (exit 1).",
            "Reads both encodings, detected from the bytes: session.jsonl.zstd (zstd frames) and session.jsonl "
                    + "(uncompressed); a file whose name claims the other encoding is rejected with a clear error.",
            "Streams: memory stays bounded whatever the log's size."
        })
final class SessionVerifyCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Parameters(
            index = "0",
            paramLabel = "FILE",
            description = "The session log (session.jsonl.zstd or session.jsonl).")
    Path file;

    @Mixin
    JsonOption json;

    @Override
    public Integer call() {
        VerifyReport report = SessionVerifier.verify(SessionCommand.existingLog(file));
        // The text names the file (and may quote its bytes): escaped like every message.
        if (json.requested()) {
            json.printDocument(report.toJson());
        } else {
            CommandSupport.out(spec).println(CommandSupport.shown(report.toText()));
        }
        return report.accepted() ? ExitCode.OK : ExitCode.FAILED;
    }
}
