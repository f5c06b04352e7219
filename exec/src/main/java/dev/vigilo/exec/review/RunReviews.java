package dev.vigilo.exec.review;

import dev.vigilo.common.errors.ConflictException;
import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.common.errors.NotFoundException;
import dev.vigilo.common.input.Names;
import dev.vigilo.exec.GateResult;
import dev.vigilo.exec.Placements;
import dev.vigilo.exec.record.ReviewRecords;
import dev.vigilo.exec.record.RunRecords;
import dev.vigilo.plan.RunVerdict;
import dev.vigilo.storage.Deadline;
import dev.vigilo.storage.ObjectRef;
import dev.vigilo.storage.ObjectStore;
import dev.vigilo.storage.ObjectStores;
import dev.vigilo.storage.Sha256;
import dev.vigilo.storage.StorageConfig;
import dev.vigilo.storage.StoreBinding;
import dev.vigilo.storage.StoreSpec;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;
import org.jdbi.v3.core.Jdbi;

/**
 * Human review of a run's cases (docs/execution.md, "Human review"): a reviewer overrides the outcome of one
 * executed case (pass or fail) with a note. Each override is an auditable record: an immutable object in the run's
 * store (docs/formats/review-override.md: who, when, why, the outcome it overrides and the digest of the execution
 * it judged), then a row of the append-only control table {@code run_review_overrides} that references it. An
 * override of an overridden case supersedes the earlier one, which stays listed. The run's recorded (machine) gate
 * table and verdict never change; {@link #gates} recomputes the table with the overrides in force beside it.
 *
 * <p>An override is <em>stale</em> when its case was executed again after it (its execution digest changed:
 * {@code run rerun-errors}); a stale override is listed but not applied. Cost: listing reads the receipts of the
 * chunks holding overridden cases (each once). Thread-safe; opens the run's store on first use and keeps it until
 * {@link #close()}.
 */
public final class RunReviews implements AutoCloseable {
    private static final Duration WRITE = Duration.ofSeconds(120);

    /** What a reviewer decides a case is. */
    public enum Verdict {
        PASS,
        FAIL;

        /** Lower-case, as in records, URLs and JSON. */
        public String spelling() {
            return name().toLowerCase(Locale.ROOT);
        }

        /** @throws InvalidInputException for anything but pass or fail */
        public static Verdict parse(String text) {
            for (Verdict v : values()) {
                if (v.spelling().equals(text)) {
                    return v;
                }
            }
            throw new InvalidInputException("unknown review outcome " + Names.quote(text) + "; use pass or fail");
        }
    }

    /**
     * One override.
     *
     * @param seq          1, 2, ... per run, in recording order
     * @param original     the machine outcome it overrides ({@code passed}, {@code failed} or {@code errored})
     * @param reviewer     who: the name the reviewer gave (the dashboard's form asks for it; the CLI's
     *                     {@code --reviewer}, by default the operating-system user)
     * @param supersedes   the seq of the override of the same case it replaced
     * @param current      whether it is the case's latest override (the one in force unless stale)
     * @param stale        whether the case was executed again after it (or no longer has an executed result): it is
     *                     not applied; review the case again
     * @param recordKey    the override object's key in the run's store
     * @param recordSha256 its SHA-256
     */
    public record CaseOverride(
            long seq,
            long ordinal,
            String caseId,
            Verdict outcome,
            String original,
            String reviewer,
            String note,
            Instant at,
            OptionalLong supersedes,
            boolean current,
            boolean stale,
            String recordKey,
            String recordSha256) {
        /** Whether the recomputed gate table applies it. */
        public boolean applied() {
            return current && !stale;
        }
    }

    /**
     * The gate table with the overrides in force, beside the machine one.
     *
     * @param machine         the machine gate table given
     * @param reviewed        the same gates recomputed with the applied overrides
     * @param reviewedVerdict the verdict the recomputed gates decide (empty while a gate is undecided)
     * @param applied         overrides applied
     * @param stale           current overrides not applied because their case was executed again
     */
    public record Reviewed(
            List<GateResult> machine,
            List<GateResult> reviewed,
            Optional<RunVerdict> reviewedVerdict,
            int applied,
            int stale) {
        public Reviewed {
            machine = List.copyOf(machine);
            reviewed = List.copyOf(reviewed);
        }
    }

    private final Placements placements;
    private final StorageConfig storage;
    private final Jdbi control;
    private final Clock clock;
    private final Map<String, ObjectStore> stores = new ConcurrentHashMap<>();

    public RunReviews(Placements placements, StorageConfig storage) {
        this(placements, storage, Clock.systemUTC());
    }

    RunReviews(Placements placements, StorageConfig storage, Clock clock) {
        this.placements = Objects.requireNonNull(placements, "placements");
        this.storage = Objects.requireNonNull(storage, "storage");
        this.control = placements.control();
        this.clock = Objects.requireNonNull(clock, "clock");
    }

    /**
     * Records an override of the executed case at {@code ordinal}: writes its object, then its row. The case's
     * latest override, if any, is superseded. Nothing is written when the input is refused.
     *
     * @param reviewer who overrides (1 to 256 printable characters)
     * @param note     why (1 to {@value ReviewRecords#MAX_NOTE} characters, not blank)
     * @throws InvalidInputException a bad reviewer or note, or a case that has not been executed
     * @throws NotFoundException     no such run
     * @throws ConflictException     the case was reviewed by someone else meanwhile (repeat after reading it), or the
     *                               override would change nothing (same outcome as the one in force)
     */
    public CaseOverride record(UUID runId, long ordinal, Verdict outcome, String reviewer, String note) {
        Objects.requireNonNull(runId, "runId");
        Objects.requireNonNull(outcome, "outcome");
        String who = Names.label(reviewer == null ? null : reviewer.strip(), "reviewer");
        String why = note(note);
        RunRecords.Run run = control.withHandle(h -> RunRecords.run(h, runId));
        List<RunRecords.Route> routes = control.withHandle(h -> RunRecords.routes(h, runId, ""));
        ObjectStore store = store(runId, run.storageBinding());
        ReviewRecords.Machine machine = ReviewRecords.machines(placements, runId, routes, store, List.of(ordinal))
                .get(ordinal);
        if (machine == null) {
            throw new InvalidInputException("case " + ordinal + " of run " + runId + " has not been executed (its"
                    + " chunk is not done); only an executed case can be reviewed");
        }
        Optional<ReviewRecords.Row> before = latest(runId, ordinal);
        if (before.isPresent()
                && before.get().outcome().equals(outcome.spelling())
                && before.get().executionSha256().equals(machine.executionSha256())) {
            throw new ConflictException("case " + ordinal + " of run " + runId + " is already overridden to "
                    + outcome.spelling() + " (override " + before.get().seq() + " by "
                    + Names.quote(before.get().reviewer()) + "); nothing to change");
        }
        Instant at = clock.instant().truncatedTo(ChronoUnit.MICROS);
        byte[] bytes = ReviewRecords.encode(
                runId,
                machine,
                outcome.spelling(),
                who,
                why,
                at,
                before.map(b -> b.record().sha256().toHex()));
        // The object first: a row never references a missing object. A row that never follows leaves an orphan,
        // harmless under its content-addressed key.
        ObjectRef ref = store.create(ReviewRecords.key(runId, Sha256.of(bytes)), bytes, Deadline.after(WRITE));
        ReviewRecords.Row row = control.inTransaction(h -> {
            ReviewRecords.lock(h, runId);
            Optional<ReviewRecords.Row> now = ReviewRecords.rows(h, runId).stream()
                    .filter(r -> r.ordinal() == ordinal)
                    .reduce((a, b) -> b);
            if (!now.map(ReviewRecords.Row::seq).equals(before.map(ReviewRecords.Row::seq))) {
                throw new ConflictException("case " + ordinal + " of run " + runId + " was reviewed meanwhile"
                        + " (override " + now.map(ReviewRecords.Row::seq).orElse(0L) + "); read it and repeat");
            }
            return ReviewRecords.insert(
                    h, runId, machine, outcome.spelling(), who, why, at, before.map(ReviewRecords.Row::seq), ref);
        });
        return toOverride(row, true, false);
    }

    private static String note(String note) {
        if (note == null || note.isBlank()) {
            throw new InvalidInputException("note: say why the outcome is overridden (the note must not be empty)");
        }
        String n = note.strip();
        if (n.length() > ReviewRecords.MAX_NOTE) {
            throw new InvalidInputException(
                    "note: " + n.length() + " characters; write at most " + ReviewRecords.MAX_NOTE);
        }
        for (int i = 0; i < n.length(); i++) {
            char c = n.charAt(i);
            if (Character.isISOControl(c) && c != '\n' && c != '\t' && c != '\r') {
                throw new InvalidInputException(String.format(
                        "note: contains the control character U+%04X at position %d; use printable text (line"
                                + " breaks are fine)",
                        (int) c, i + 1));
            }
        }
        return n;
    }

    private Optional<ReviewRecords.Row> latest(UUID runId, long ordinal) {
        return control.withHandle(h -> ReviewRecords.rows(h, runId)).stream()
                .filter(r -> r.ordinal() == ordinal)
                .reduce((a, b) -> b);
    }

    /**
     * Every override of the run in recording order, superseded ones included, each marked current and stale as it
     * is now.
     *
     * @throws NotFoundException no such run
     */
    public List<CaseOverride> list(UUID runId) {
        Objects.requireNonNull(runId, "runId");
        RunRecords.Run run = control.withHandle(h -> RunRecords.run(h, runId));
        List<ReviewRecords.Row> rows = control.withHandle(h -> ReviewRecords.rows(h, runId));
        if (rows.isEmpty()) {
            return List.of();
        }
        Map<Long, ReviewRecords.Row> current = ReviewRecords.current(rows);
        List<RunRecords.Route> routes = control.withHandle(h -> RunRecords.routes(h, runId, ""));
        Map<Long, ReviewRecords.Machine> now =
                ReviewRecords.machines(placements, runId, routes, store(runId, run.storageBinding()), current.keySet());
        List<CaseOverride> out = new ArrayList<>();
        for (ReviewRecords.Row r : rows) {
            boolean isCurrent = current.get(r.ordinal()).seq() == r.seq();
            ReviewRecords.Machine m = now.get(r.ordinal());
            boolean stale = m == null || !m.executionSha256().equals(r.executionSha256());
            out.add(toOverride(r, isCurrent, stale));
        }
        return out;
    }

    /** The overrides of one case, oldest first (the last is in force unless stale). */
    public List<CaseOverride> forCase(UUID runId, long ordinal) {
        return list(runId).stream().filter(o -> o.ordinal() == ordinal).collect(Collectors.toList());
    }

    /**
     * The gate table {@code machine} (the run's as {@code run status} shows it: settled, or partial while it
     * executes) recomputed with the run's overrides in force; empty when the run has no override.
     */
    public Optional<Reviewed> gates(UUID runId, List<GateResult> machine) {
        List<CaseOverride> all = list(runId);
        if (all.isEmpty()) {
            return Optional.empty();
        }
        RunRecords.Run run = control.withHandle(h -> RunRecords.run(h, runId));
        List<RunRecords.Route> routes = control.withHandle(h -> RunRecords.routes(h, runId, ""));
        List<Long> ordinals = all.stream()
                .filter(CaseOverride::applied)
                .map(CaseOverride::ordinal)
                .toList();
        Map<Long, ReviewRecords.Machine> now =
                ReviewRecords.machines(placements, runId, routes, store(runId, run.storageBinding()), ordinals);
        List<ReviewRecords.Applied> applied = new ArrayList<>();
        for (CaseOverride o : all) {
            if (o.applied()) {
                applied.add(new ReviewRecords.Applied(
                        now.get(o.ordinal()).gates(), o.outcome().spelling()));
            }
        }
        List<GateResult> reviewed = ReviewRecords.recompute(machine, applied);
        Optional<RunVerdict> verdict = reviewed.isEmpty()
                        || reviewed.stream().anyMatch(g -> g.decision().isEmpty())
                ? Optional.empty()
                : Optional.of(GateResult.verdict(reviewed));
        int stale = (int) all.stream().filter(o -> o.current() && o.stale()).count();
        return Optional.of(new Reviewed(machine, reviewed, verdict, applied.size(), stale));
    }

    private static CaseOverride toOverride(ReviewRecords.Row r, boolean current, boolean stale) {
        return new CaseOverride(
                r.seq(),
                r.ordinal(),
                r.caseId(),
                Verdict.parse(r.outcome()),
                r.original(),
                r.reviewer(),
                r.note(),
                r.createdAt(),
                r.supersedes().map(OptionalLong::of).orElse(OptionalLong.empty()),
                current,
                stale,
                r.record().key().value(),
                r.record().sha256().toHex());
    }

    private ObjectStore store(UUID runId, String binding) {
        return stores.computeIfAbsent(binding, b -> {
            StoreSpec spec = storage.resolve(new StoreBinding(b))
                    .orElseThrow(() -> new InvalidInputException("run " + runId + ": its records are stored in " + b
                            + ", which the storage configuration (" + storage.source() + ") does not resolve; use a"
                            + " configuration with that store"));
            return ObjectStores.open(spec);
        });
    }

    @Override
    public void close() {
        stores.values().forEach(ObjectStore::close);
        stores.clear();
    }
}
