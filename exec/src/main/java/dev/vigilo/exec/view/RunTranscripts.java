package dev.vigilo.exec.view;

import dev.vigilo.common.errors.DamagedException;
import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.common.errors.NotFoundException;
import dev.vigilo.common.errors.UnavailableException;
import dev.vigilo.common.input.Names;
import dev.vigilo.exec.Placements;
import dev.vigilo.exec.ScratchDirs;
import dev.vigilo.exec.record.ChunkRows;
import dev.vigilo.exec.record.PlanRecord;
import dev.vigilo.exec.record.Receipt;
import dev.vigilo.exec.record.RunRecords;
import dev.vigilo.plan.PublishedPlan;
import dev.vigilo.sessionlog.SessionCat;
import dev.vigilo.sessionlog.VerifyReport;
import dev.vigilo.storage.ObjectRef;
import dev.vigilo.storage.ObjectStore;
import dev.vigilo.storage.ObjectStores;
import dev.vigilo.storage.StorageConfig;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.UUID;
import org.jdbi.v3.core.Jdbi;

/**
 * {@code vigilo run transcript}: finds an executed case's transcripts and streams one of them (docs/transcripts.md).
 *
 * <p>{@link #find} locates the case's chunk by its id in the plan's chunk files ({@link CaseLocator}: no index by id
 * exists, so a lookup reads the chunk files in chunk order up to the case's, eight at a time), reads the chunk's row in
 * the execution database its shard is routed to, and the receipt the row references (verified, and checked against
 * the row). {@link #write} reads one transcript through its reference (length and SHA-256; a slice of a transcript
 * container by a ranged read of the slice alone), then streams its
 * committed events with the session-log reader. Memory: eight chunk files during the lookup; one transcript object
 * (bounded by the agent protocol's limits) and one frame of it while streaming. Thread-safe.
 */
public final class RunTranscripts {
    private static final Duration READ = Duration.ofSeconds(120);

    /**
     * One attempt's transcript.
     *
     * @param attempt    1-based attempt number
     * @param transcript the transcript's reference (key, length, SHA-256), as the receipt records it
     * @param offset     the slice's start in the transcript container at the key (receipt version 8); empty: the
     *                   transcript is the whole object
     */
    public record Attempt(int attempt, ObjectRef transcript, OptionalLong offset) {
        public Attempt {
            Objects.requireNonNull(transcript, "transcript");
            Objects.requireNonNull(offset, "offset");
        }

        /** A transcript that is a whole object. */
        public Attempt(int attempt, ObjectRef transcript) {
            this(attempt, transcript, OptionalLong.empty());
        }

        /** The attempt of a receipt's transcript reference. */
        public static Attempt of(Receipt.TranscriptRef t) {
            return new Attempt(t.attempt(), t.ref(), t.offset());
        }
    }

    /**
     * One epoch of a case of a run of several epochs, with its own attempts and their transcripts.
     *
     * @param epoch    the 1-based epoch
     * @param errored  whether the agent ended in an error in this epoch
     * @param attempts the epoch's attempts, each with its transcript, in attempt order
     */
    public record Epoch(int epoch, boolean errored, List<Attempt> attempts) {
        public Epoch {
            attempts = List.copyOf(attempts);
        }

        /** The given attempt, if the epoch has it. */
        public Optional<Attempt> attempt(int n) {
            return attempts.stream().filter(a -> a.attempt() == n).findFirst();
        }
    }

    /**
     * Which epoch a viewer asked for: {@code requested}, or the last one when empty. The one rule of {@code vigilo
     * run transcript --epoch} and the dashboard's {@code epoch=}.
     *
     * @param epochs the run's epochs per case (1 for a run of one epoch)
     * @throws InvalidInputException an epoch the run does not have (anything but 1 for a run of one epoch)
     */
    public static int epoch(UUID runId, int epochs, Optional<Integer> requested) {
        int e = requested.orElse(epochs);
        if (e >= 1 && e <= epochs) {
            return e;
        }
        if (epochs == 1) {
            throw new InvalidInputException("epoch " + e + ": run " + runId + " ran each case once (one epoch);"
                    + " leave the epoch out or choose 1");
        }
        throw new InvalidInputException("epoch " + e + ": run " + runId + " ran each case " + epochs + " times"
                + " (epochs); choose 1 to " + epochs);
    }

    /**
     * An executed case and its transcripts.
     *
     * @param ordinal         the case's position in the dataset
     * @param chunkIndex      its chunk
     * @param shard           its chunk's shard
     * @param leaseGeneration the lease generation the counted receipt (and so every transcript) was written under
     * @param errored         whether the agent ended in an error
     * @param attempts        the agent's attempts, each with its transcript, in attempt order; empty for a receipt of
     *                        version 1 (written before transcripts were recorded)
     * @param gates           the case's outcome per selecting gate ({@code passed}, {@code failed} or {@code errored})
     * @param epochs          in a run of several epochs, each epoch with its attempts, in epoch order ({@code attempts}
     *                        is then empty: the transcripts belong to the epochs); empty in a run of one epoch
     */
    public record CaseTranscripts(
            UUID runId,
            String caseId,
            long ordinal,
            long chunkIndex,
            int shard,
            long leaseGeneration,
            boolean errored,
            List<Attempt> attempts,
            Map<String, String> gates,
            List<Epoch> epochs) {
        public CaseTranscripts {
            attempts = List.copyOf(attempts);
            gates = Collections.unmodifiableMap(new LinkedHashMap<>(gates));
            epochs = List.copyOf(epochs);
        }

        /** Epochs per case of the run: 1 for a run of one epoch. */
        public int epochCount() {
            return Math.max(1, epochs.size());
        }

        /**
         * The attempts of epoch {@code requested} (the last when empty); a run of one epoch has only epoch 1, its
         * case's attempts.
         *
         * @throws InvalidInputException an epoch the run does not have
         */
        public Epoch epoch(Optional<Integer> requested) {
            int e = RunTranscripts.epoch(runId, epochCount(), requested);
            return epochs.isEmpty() ? new Epoch(1, errored, attempts) : epochs.get(e - 1);
        }

        /** The given attempt, if the case has it. */
        public Optional<Attempt> attempt(int n) {
            return attempts.stream().filter(a -> a.attempt() == n).findFirst();
        }
    }

    private final Placements placements;
    private final StorageConfig storage;
    private final Jdbi control;

    public RunTranscripts(Placements placements, StorageConfig storage) {
        this.placements = Objects.requireNonNull(placements, "placements");
        this.storage = Objects.requireNonNull(storage, "storage");
        this.control = placements.control();
    }

    /**
     * Finds the case {@code caseId} of run {@code runId} and its transcripts.
     *
     * @throws NotFoundException     no such run, or no case with this id in the run's plan
     * @throws InvalidInputException the run's plan is not published, or the case's chunk has not been executed
     * @throws DamagedException      a plan file, the chunk row or the receipt is missing or altered
     * @throws UnavailableException  an execution database or the store cannot be reached
     */
    public CaseTranscripts find(UUID runId, String caseId) {
        Objects.requireNonNull(runId, "runId");
        Objects.requireNonNull(caseId, "caseId");
        PlanRecord record =
                control.withHandle(h -> PlanRecord.find(h, runId)).orElseThrow(() -> RunRecords.notFound(runId));
        try (ObjectStore store = ObjectStores.open(record.store(storage))) {
            PublishedPlan plan = record.plan(store, READ);
            CaseLocator.Located where = CaseLocator.find(plan, store, caseId)
                    .orElseThrow(() -> new NotFoundException("run " + runId + " has no case with id \""
                            + Names.printable(caseId) + "\" (its plan lists "
                            + plan.manifest().cases() + " cases); check the id (ids are case-sensitive)"));
            int shard = PublishedPlan.shardOf(where.chunkIndex());
            RunRecords.Route route = control.withHandle(h -> RunRecords.routes(h, runId, "")).stream()
                    .filter(r -> r.shard() == shard)
                    .findFirst()
                    .orElseThrow(() -> notRun(runId, caseId, "the run was not admitted for execution"));
            ChunkRows.Row row = ChunkRows.one(placements, runId, route.placement(), where.chunkIndex())
                    .orElseThrow(() -> new DamagedException("run " + runId + ": chunk " + where.chunkIndex()
                            + " has no scheduling row in execution database \"" + route.placement()
                            + "\"; the execution records are damaged"));
            if (!row.done()) {
                throw notRun(runId, caseId, "its chunk " + where.chunkIndex() + " is " + row.state());
            }
            Receipt receipt = ChunkRows.receipt(runId, store, row);
            Receipt.CaseResult c = receipt.cases().stream()
                    .filter(x -> x.ordinal() == where.entry().ordinal())
                    .findFirst()
                    .filter(x -> x.id().equals(caseId))
                    .orElseThrow(() -> new DamagedException(
                            "receipt " + row.receipt().orElseThrow().key()
                                    + " of run " + runId + " has no entry for case \"" + caseId + "\" at ordinal "
                                    + where.entry().ordinal() + "; the execution records were altered"));
            Map<String, String> gates = new LinkedHashMap<>();
            c.gates().forEach((g, o) -> gates.put(g, o.wire));
            return new CaseTranscripts(
                    runId,
                    caseId,
                    c.ordinal(),
                    row.chunkIndex(),
                    shard,
                    receipt.leaseGeneration(),
                    c.errored(),
                    c.transcripts().stream().map(Attempt::of).toList(),
                    gates,
                    epochs(c));
        }
    }

    /** The case's epochs with their transcripts, in epoch order; empty with one epoch. */
    static List<Epoch> epochs(Receipt.CaseResult c) {
        List<Epoch> out = new java.util.ArrayList<>();
        for (int i = 0; i < c.epochs().size(); i++) {
            Receipt.CaseResult e = c.epochs().get(i);
            out.add(new Epoch(
                    i + 1,
                    e.errored(),
                    e.transcripts().stream().map(Attempt::of).toList()));
        }
        return out;
    }

    private static InvalidInputException notRun(UUID runId, String caseId, String why) {
        return new InvalidInputException("case \"" + Names.printable(caseId) + "\" of run " + runId
                + " has not been executed (" + why + "); see `vigilo run status " + runId + "`");
    }

    /**
     * Streams one transcript's committed events as JSON lines (one event per line, the session log's commit records
     * left out) to {@code out}, which is flushed, not closed.
     *
     * @return the session-log reader's verdict on the transcript (accepted)
     * @throws DamagedException     when the transcript is missing, differs from its reference, or the session-log
     *                              reader rejects it (events before the problem may have been written)
     * @throws UnavailableException when the store or {@code out} fails
     */
    public VerifyReport write(UUID runId, Attempt attempt, OutputStream out) {
        return write(runId, attempt, 0, out);
    }

    /**
     * Like {@link #write(UUID, Attempt, OutputStream)}, from the committed event with sequence number
     * {@code fromSeq} on (a viewer's page); the whole transcript is still read and judged.
     */
    public VerifyReport write(UUID runId, Attempt attempt, long fromSeq, OutputStream out) {
        Objects.requireNonNull(attempt, "attempt");
        if (fromSeq < 0) {
            throw new InvalidInputException("a transcript's events are numbered from 0; " + fromSeq + " is none");
        }
        Objects.requireNonNull(out, "out");
        PlanRecord record =
                control.withHandle(h -> PlanRecord.find(h, runId)).orElseThrow(() -> RunRecords.notFound(runId));
        String key = attempt.transcript().key().value();
        byte[] bytes;
        try (ObjectStore store = ObjectStores.open(record.store(storage))) {
            bytes = ChunkRows.readTranscript(
                    store,
                    attempt.transcript(),
                    attempt.offset(),
                    "transcript " + key
                            + attempt.offset().stream()
                                    .mapToObj(o -> " at " + o)
                                    .findFirst()
                                    .orElse("") + " of run " + runId);
        }
        Path dir = null;
        try {
            dir = Files.createTempDirectory("vigilo-transcript-");
            Path file = dir.resolve("session.jsonl.zstd");
            Files.write(file, bytes);
            SessionCat.CatReport r = SessionCat.cat(file, fromSeq, out);
            if (!r.report().accepted()) {
                throw new DamagedException("transcript " + key + " of run " + runId + " is not a readable session log: "
                        + r.report().error());
            }
            return r.report();
        } catch (IOException e) {
            throw new UnavailableException(
                    "cannot stage transcript " + key + " in the temporary directory: " + e.getMessage(), e);
        } finally {
            ScratchDirs.delete(dir);
        }
    }
}
