package dev.vigilo.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import dev.vigilo.common.errors.DamagedException;
import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.common.errors.NotFoundException;
import dev.vigilo.common.input.Names;
import dev.vigilo.exec.view.RunTranscripts;
import java.io.PrintWriter;
import java.util.UUID;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code vigilo run transcript RUN_ID CASE_ID [--epoch E] [--attempt N] [--json]}. In a run of several epochs every
 * epoch has its own attempts; {@code --epoch} picks one (default the last), and a run of one epoch has only epoch 1.
 */
@Command(
        name = "transcript",
        mixinStandardHelpOptions = true,
        description = {
            "Show the transcript of one executed case: the conversation of its last attempt (or --attempt N),"
                    + " streamed, with the output, the evaluators' results and the gate outcomes.",
            "In a run of several epochs each epoch has its own attempts: --epoch E picks the epoch (default the"
                    + " last).",
            "The case is found by id in the run's plan (the chunk files are read in order until it is found)."
        })
final class RunTranscriptCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    IdParameters.Run runId;

    @Parameters(index = "1", paramLabel = "CASE_ID", description = "The case's id, as in the dataset.")
    String caseId;

    @Option(names = "--attempt", paramLabel = "N", description = "Which attempt (from 1; default: the last).")
    Integer attempt;

    @Option(
            names = "--epoch",
            paramLabel = "E",
            description = "In a run of several epochs, which epoch (from 1; default: the last). A run of one epoch has"
                    + " only epoch 1.")
    Integer epoch;

    @Mixin
    JsonOption json;

    @Override
    public Integer call() {
        UUID run = runId.id();
        PrintWriter out = CommandSupport.out(spec);
        try (Connections connections = CommandSupport.root(spec).connections()) {
            RunTranscripts reader = new RunTranscripts(connections.placements(), connections.storage());
            RunTranscripts.CaseTranscripts c = reader.find(run, caseId);
            String name = Names.quote(caseId);
            if (c.attempts().isEmpty() && c.epochs().isEmpty()) {
                throw new NotFoundException("case " + name + " of run " + run + " has no transcript: its receipt was"
                        + " written before transcripts were recorded (receipt version 1)");
            }
            RunTranscripts.Epoch chosen;
            try {
                chosen = c.epoch(java.util.Optional.ofNullable(epoch));
            } catch (InvalidInputException e) {
                throw new InvalidInputException("--" + e.getMessage());
            }
            int n = attempt == null
                    ? chosen.attempts().get(chosen.attempts().size() - 1).attempt()
                    : attempt;
            String of = c.epochCount() > 1 ? " in epoch " + chosen.epoch() : "";
            RunTranscripts.Attempt a = chosen.attempt(n)
                    .orElseThrow(() -> new InvalidInputException("--attempt " + n + ": case " + name + " of run " + run
                            + " made " + chosen.attempts().size() + " attempts" + of + "; choose 1 to "
                            + chosen.attempts().size()));
            if (json.requested()) {
                try (LineSink lines = new LineSink(out::println)) {
                    reader.write(run, a, lines);
                }
                out.flush();
                return ExitCode.OK;
            }
            out.println(Names.printable("case " + name + " (ordinal " + c.ordinal() + ", chunk " + c.chunkIndex()
                    + ") of run " + run + ":"
                    + (c.epochCount() > 1 ? " epoch " + chosen.epoch() + " of " + c.epochCount() + "," : "")
                    + " attempt " + n + " of "
                    + chosen.attempts().size() + ", "
                    + (chosen.errored() ? "errored" : "answered") + ", lease generation " + c.leaseGeneration()));
            out.println("transcript " + a.transcript().key()
                    // a slice of a transcript container (receipt version 8) starts at its offset
                    + a.offset().stream()
                            .mapToObj(o -> " at byte " + o)
                            .findFirst()
                            .orElse("")
                    + " (" + a.transcript().length() + " bytes, SHA-256 "
                    + a.transcript().sha256().toHex() + ")");
            TranscriptRenderer renderer = new TranscriptRenderer(out);
            try (LineSink lines = new LineSink(line -> {
                try {
                    renderer.render(Json.read(line));
                } catch (JsonProcessingException e) {
                    throw new DamagedException("transcript " + a.transcript().key() + " of run " + run
                            + ": an event is not valid JSON: " + e.getOriginalMessage());
                }
            })) {
                reader.write(run, a, lines);
            }
            out.flush();
            return ExitCode.OK;
        }
    }
}
