package dev.vigilo.cli;

import dev.vigilo.web.Dashboard;
import dev.vigilo.web.DashboardOptions;
import dev.vigilo.web.DashboardSources;
import java.io.PrintWriter;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code vigilo session view FILE}: the transcript viewer on one session log, on 127.0.0.1 (docs/web.md). */
@Command(
        name = "view",
        mixinStandardHelpOptions = true,
        description = {
            "Open a session log in the web transcript viewer: turns, steps, messages, reasoning, tool calls and"
                    + " results with timings, and the log's verdict, high watermark, fenced rows and torn tail.",
            "Serves 127.0.0.1 only and reads only FILE (no database needed); prints the URL. Runs until Ctrl-C."
        })
final class SessionViewCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Parameters(index = "0", paramLabel = "FILE", description = "The session log (session.jsonl.zstd).")
    Path file;

    @Option(names = "--port", paramLabel = "N", description = "Port to listen on (default 7070; 0 for any free port).")
    int port = DashboardOptions.DEFAULT_PORT;

    @Override
    public Integer call() {
        Path log = SessionCommand.existingLog(file).toAbsolutePath().normalize();
        PrintWriter out = CommandSupport.out(spec);
        DashboardOptions options = new DashboardOptions(DashboardOptions.LOOPBACK, port, Optional.empty());
        try (Dashboard dashboard = Dashboard.start(options, DashboardSources.transcripts(List.of(log)))) {
            out.println("Transcript viewer: "
                    + dashboard.url(
                            "/sessions/view?path=" + URLEncoder.encode(log.toString(), StandardCharsets.UTF_8)));
            out.println("Ctrl-C stops it");
            out.flush();
            ServeCommand.waitUntilInterrupted();
            out.println("stopped");
        }
        return ExitCode.OK;
    }
}
