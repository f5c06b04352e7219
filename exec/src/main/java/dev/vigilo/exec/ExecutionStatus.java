package dev.vigilo.exec;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.vigilo.common.json.StrictJson;
import dev.vigilo.plan.RunLifecycle;
import dev.vigilo.plan.RunState;
import dev.vigilo.stats.ProportionInterval;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.OptionalLong;
import java.util.UUID;

/**
 * A run's execution progress and results, as {@code vigilo run status --json} adds them to the preparation status
 * (docs/execution.md, "Status"). Immutable.
 *
 * @param runId         the run
 * @param status        the run's status when this was read (creating, pending, running, paused, settled, cancelled, failed)
 * @param verdict       {@code passed} or {@code failed} once settled; empty before, and for failed or cancelled runs
 * @param failureReason why the run failed, when it did
 * @param paused        why and since when the run is paused, while it is
 * @param execution     chunk and case progress, in all and per routed shard
 * @param gates         the gate table: final once settlement recorded it, otherwise the counts so far (partial)
 * @param gatesFinal    whether {@code gates} is the recorded table of a settled or failed run
 * @param waiting       what live workers of the run wait for now (its store or one of its execution databases, out of
 *                      reach): empty when nothing is out, and for a run that is not pending or running
 * @param usage         the tokens and cost of the run's model calls so far, or as settlement recorded them: by scope,
 *                      {@link #ALL_CASES} for every case and each gate's name for the cases it selects; empty for runs
 *                      whose receipts carry no usage (written before usage was recorded) and before any chunk is done
 * @param agreement     the judges' agreement per scope (as {@code usage}) and panel evaluator, from the panel results
 *                      so far or as settlement recorded them; empty for runs without panels
 * @param budget        the run's budget, what it spent and what workers hold reserved; empty without a budget
 * @param limiters      the fleet limiters of the run's model endpoints (rate limits, circuit breakers) as the fleet
 *                      shares them now; empty for runs without them
 */
public record ExecutionStatus(
        UUID runId,
        String status,
        Optional<String> verdict,
        Optional<String> failureReason,
        Progress execution,
        List<GateResult> gates,
        boolean gatesFinal,
        List<Wait> waiting,
        Map<String, UsageSummary> usage,
        Map<String, Map<String, Agreement>> agreement,
        Optional<Paused> paused,
        Optional<Budget> budget,
        List<Limiter> limiters) {
    private static final ObjectMapper MAPPER = StrictJson.newMapper();
    /** The usage scope of every case of the run. */
    public static final String ALL_CASES = "*";

    public ExecutionStatus {
        Objects.requireNonNull(runId, "runId");
        Objects.requireNonNull(status, "status");
        Objects.requireNonNull(verdict, "verdict");
        Objects.requireNonNull(failureReason, "failureReason");
        Objects.requireNonNull(execution, "execution");
        gates = List.copyOf(gates);
        waiting = List.copyOf(waiting);
        usage = Map.copyOf(usage);
        agreement = Map.copyOf(agreement);
        Objects.requireNonNull(paused, "paused");
        Objects.requireNonNull(budget, "budget");
        limiters = List.copyOf(limiters);
    }

    /** A status of a run without a budget and without fleet limiters. */
    public ExecutionStatus(
            UUID runId,
            String status,
            Optional<String> verdict,
            Optional<String> failureReason,
            Progress execution,
            List<GateResult> gates,
            boolean gatesFinal,
            List<Wait> waiting,
            Map<String, UsageSummary> usage,
            Map<String, Map<String, Agreement>> agreement,
            Optional<Paused> paused) {
        this(
                runId,
                status,
                verdict,
                failureReason,
                execution,
                gates,
                gatesFinal,
                waiting,
                usage,
                agreement,
                paused,
                Optional.empty(),
                List.of());
    }

    /**
     * A run's hard budget (docs/execution.md, "Budget"): the limits in force (empty: not limited), what its model calls
     * spent (settled calls, and the whole grants of workers that died) and what live workers hold reserved (calls in
     * flight and their local headroom).
     */
    public record Budget(
            Optional<java.math.BigDecimal> maxCostUsd,
            Optional<Long> maxTokens,
            java.math.BigDecimal spentCostUsd,
            long spentTokens,
            java.math.BigDecimal reservedCostUsd,
            long reservedTokens) {
        public Budget {
            Objects.requireNonNull(maxCostUsd, "maxCostUsd");
            Objects.requireNonNull(maxTokens, "maxTokens");
            Objects.requireNonNull(spentCostUsd, "spentCostUsd");
            Objects.requireNonNull(reservedCostUsd, "reservedCostUsd");
        }

        /** {@code budget $25.00: $3.2 spent, $0.4 reserved; 50,000,000 tokens: 1,234 spent, 300 reserved}. */
        public String line() {
            StringBuilder b = new StringBuilder("budget");
            maxCostUsd.ifPresent(m -> b.append(" $")
                    .append(dev.vigilo.llm.Pricing.text(m))
                    .append(": $")
                    .append(dev.vigilo.llm.Pricing.text(spentCostUsd))
                    .append(" spent, $")
                    .append(dev.vigilo.llm.Pricing.text(reservedCostUsd))
                    .append(" reserved"));
            maxTokens.ifPresent(m -> b.append(maxCostUsd.isPresent() ? ";" : "")
                    .append(String.format(" %,d tokens: %,d spent, %,d reserved", m, spentTokens, reservedTokens)));
            return b.toString();
        }

        void putJson(ObjectNode o) {
            if (maxCostUsd.isPresent()) {
                o.put("max_cost_usd", dev.vigilo.llm.Pricing.text(maxCostUsd.get()));
            } else {
                o.putNull("max_cost_usd");
            }
            if (maxTokens.isPresent()) {
                o.put("max_tokens", maxTokens.get());
            } else {
                o.putNull("max_tokens");
            }
            o.put("spent_cost_usd", dev.vigilo.llm.Pricing.text(spentCostUsd));
            o.put("spent_tokens", spentTokens);
            o.put("reserved_cost_usd", dev.vigilo.llm.Pricing.text(reservedCostUsd));
            o.put("reserved_tokens", reservedTokens);
        }
    }

    /**
     * The fleet limiter of one of the run's model endpoints as the fleet shares it now (docs/execution.md, "Fleet
     * rate limit", "Circuit breaker"): its configured and current rates, why the rate last changed, and its circuit.
     *
     * @param at                       where the run's configuration names the endpoint: {@code agent},
     *                                 {@code evaluators.NAME}, {@code evaluators.NAME.judges.JUDGE}
     * @param endpoint                 url, model and api-key variable name (never a key)
     * @param requestsPerMinute        the configured request rate (0: none)
     * @param tokensPerMinute          the configured token rate (0: none)
     * @param maxInFlight              the configured bound of calls in flight (0: none)
     * @param rateFactor               the fraction of the configured rates in use now (1: all)
     * @param rateReason               why it last changed
     * @param rateChangedAt            when
     * @param circuit                  closed, open or half_open
     * @param circuitSince             since when
     * @param circuitReason            why
     */
    public record Limiter(
            String at,
            String endpoint,
            int requestsPerMinute,
            int tokensPerMinute,
            int maxInFlight,
            double rateFactor,
            String rateReason,
            Instant rateChangedAt,
            String circuit,
            Instant circuitSince,
            String circuitReason) {
        public Limiter {
            Objects.requireNonNull(at, "at");
            Objects.requireNonNull(endpoint, "endpoint");
            Objects.requireNonNull(rateReason, "rateReason");
            Objects.requireNonNull(rateChangedAt, "rateChangedAt");
            Objects.requireNonNull(circuit, "circuit");
            Objects.requireNonNull(circuitSince, "circuitSince");
            Objects.requireNonNull(circuitReason, "circuitReason");
        }

        /** The request rate in use now (the configured one times the factor), 0 without a request limit. */
        public long currentRequestsPerMinute() {
            return Math.round(requestsPerMinute * rateFactor);
        }

        /** The token rate in use now, 0 without a token limit. */
        public long currentTokensPerMinute() {
            return Math.round(tokensPerMinute * rateFactor);
        }

        /**
         * For people: {@code agent (http://h/v1 model m key $K): 300 of 600 requests/min since 2026-...Z (429 Too
         * Many Requests: rate lowered); circuit open since 2026-...Z: 5 connection failures or 5xx in a row (...)}.
         */
        public String line() {
            StringBuilder b =
                    new StringBuilder(at).append(" (").append(endpoint).append("): ");
            List<String> rates = new java.util.ArrayList<>();
            if (requestsPerMinute > 0) {
                rates.add(currentRequestsPerMinute() + " of " + requestsPerMinute + " requests/min");
            }
            if (tokensPerMinute > 0) {
                rates.add(currentTokensPerMinute() + " of " + tokensPerMinute + " tokens/min");
            }
            if (maxInFlight > 0) {
                rates.add("at most " + maxInFlight + " in flight");
            }
            b.append(rates.isEmpty() ? "no rate limit" : String.join(", ", rates));
            if (requestsPerMinute > 0 || tokensPerMinute > 0) {
                b.append(" since ")
                        .append(rateChangedAt.truncatedTo(ChronoUnit.SECONDS))
                        .append(" (")
                        .append(rateReason)
                        .append(")");
            }
            b.append("; circuit ").append(circuit.replace('_', '-'));
            if (!circuit.equals("closed")) {
                b.append(" since ")
                        .append(circuitSince.truncatedTo(ChronoUnit.SECONDS))
                        .append(": ")
                        .append(circuitReason);
            }
            return b.toString();
        }

        void putJson(ObjectNode o) {
            o.put("at", at).put("endpoint", endpoint);
            putLimit(o, "requests_per_minute", requestsPerMinute);
            putLimit(o, "current_requests_per_minute", currentRequestsPerMinute());
            putLimit(o, "tokens_per_minute", tokensPerMinute);
            putLimit(o, "current_tokens_per_minute", currentTokensPerMinute());
            putLimit(o, "max_in_flight", maxInFlight);
            o.put("rate_factor", rateFactor)
                    .put("rate_reason", rateReason)
                    .put(
                            "rate_changed_at",
                            rateChangedAt.truncatedTo(ChronoUnit.SECONDS).toString())
                    .put("circuit", circuit)
                    .put(
                            "circuit_since",
                            circuitSince.truncatedTo(ChronoUnit.SECONDS).toString())
                    .put("circuit_reason", circuitReason);
        }

        private static void putLimit(ObjectNode o, String key, long value) {
            if (value > 0) {
                o.put(key, value);
            } else {
                o.putNull(key);
            }
        }
    }

    /**
     * Why and since when a paused run is paused (docs/execution.md, "Pause and resume").
     *
     * @param reason for people, e.g. {@code by vigilo run pause}
     */
    public record Paused(String reason, Instant since) {
        public Paused {
            Objects.requireNonNull(reason, "reason");
            Objects.requireNonNull(since, "since");
        }

        /** {@code paused since 2026-12-02T14:31:07Z: by vigilo run pause}. */
        public String line() {
            return "paused since " + since.truncatedTo(ChronoUnit.SECONDS) + ": " + reason;
        }
    }

    /** A status of a run that is not paused. */
    public ExecutionStatus(
            UUID runId,
            String status,
            Optional<String> verdict,
            Optional<String> failureReason,
            Progress execution,
            List<GateResult> gates,
            boolean gatesFinal,
            List<Wait> waiting,
            Map<String, UsageSummary> usage,
            Map<String, Map<String, Agreement>> agreement) {
        this(
                runId,
                status,
                verdict,
                failureReason,
                execution,
                gates,
                gatesFinal,
                waiting,
                usage,
                agreement,
                Optional.empty());
    }

    /**
     * One panel's agreement over some cases: Krippendorff's alpha (interval metric) of its judges' scores
     * (docs/execution.md, "Judge agreement").
     *
     * @param values the pairable scores (judges' scores in units of at least two)
     * @param alpha  1 for perfect agreement, 0 for chance; empty when undefined (fewer than two values, or every score
     *               equal)
     */
    public record Agreement(long values, OptionalDouble alpha) {
        public Agreement {
            Objects.requireNonNull(alpha, "alpha");
        }
    }

    /** A status without judge agreement. */
    public ExecutionStatus(
            UUID runId,
            String status,
            Optional<String> verdict,
            Optional<String> failureReason,
            Progress execution,
            List<GateResult> gates,
            boolean gatesFinal,
            List<Wait> waiting,
            Map<String, UsageSummary> usage) {
        this(runId, status, verdict, failureReason, execution, gates, gatesFinal, waiting, usage, Map.of());
    }

    /** A status without usage. */
    public ExecutionStatus(
            UUID runId,
            String status,
            Optional<String> verdict,
            Optional<String> failureReason,
            Progress execution,
            List<GateResult> gates,
            boolean gatesFinal,
            List<Wait> waiting) {
        this(runId, status, verdict, failureReason, execution, gates, gatesFinal, waiting, Map.of(), Map.of());
    }

    /**
     * The panels' agreement over {@code scope} ({@link #ALL_CASES} or a gate) for people: {@code quality 0.710 over
     * 412 scores; ...} in panel order ({@code undefined} when alpha is); empty without panels.
     */
    public Optional<String> agreementLine(String scope) {
        Map<String, Agreement> panels = agreement.get(scope);
        if (panels == null || panels.isEmpty()) {
            return Optional.empty();
        }
        List<String> parts = new java.util.ArrayList<>();
        new java.util.TreeMap<>(panels)
                .forEach((panel, a) -> parts.add(panel + " "
                        + (a.alpha().isPresent()
                                ? String.format(
                                        java.util.Locale.ROOT, "%.3f", a.alpha().getAsDouble())
                                : "undefined")
                        + " over " + a.values() + " scores"));
        return Optional.of(String.join("; ", parts));
    }

    /** The usage of the cases of {@code scope} ({@link #ALL_CASES} or a gate's name), when known. */
    public Optional<UsageSummary> usage(String scope) {
        return Optional.ofNullable(usage.get(scope));
    }

    /** The usage of every case of the run, when known. */
    public Optional<UsageSummary> runUsage() {
        return Optional.ofNullable(usage.get(ALL_CASES));
    }

    /**
     * Workers of the run waiting for a service that is out (docs/execution.md, "Outages"): their chunks keep their
     * attempts and carry on once it answers.
     *
     * @param service what they wait for
     * @param target  the store binding or the execution database's alias
     * @param since   when the earliest of them started waiting
     * @param workers how many workers wait for it
     * @param error   the latest failure they saw (one line, credentials masked)
     */
    public record Wait(Service service, String target, Instant since, int workers, String error) {
        public Wait {
            Objects.requireNonNull(service, "service");
            Objects.requireNonNull(target, "target");
            Objects.requireNonNull(since, "since");
            Objects.requireNonNull(error, "error");
        }

        /** {@code waiting for the store since 2026-11-30T05:47:18Z}: the line status views show. */
        public String describe() {
            return "waiting for " + service.described() + " since " + since.truncatedTo(ChronoUnit.SECONDS);
        }
    }

    /**
     * Progress over the run's chunks.
     *
     * @param chunks       chunks of the plan
     * @param chunksDone   chunks completed with a receipt
     * @param chunksFailed chunks that ended failed (their cases never ran)
     * @param cases        cases of the plan
     * @param casesDone    cases of done chunks (each ran: passed, failed or errored)
     * @param shards       routed shards in ascending order (empty before admission)
     * @param unreachable  execution databases of the run that could not be read now (sorted): the done and failed
     *                     counts above leave out their shards, whose own counts are unknown ({@code -1})
     * @param chunksRequeuedAfterExpiry chunks claimed again after a lease of theirs expired (a worker that died, was
     *                     cut off or stalled; execution migration V9), whatever their state now; unreachable execution
     *                     databases' chunks left out as above
     */
    public record Progress(
            long chunks,
            long chunksDone,
            long chunksFailed,
            long cases,
            long casesDone,
            List<ShardProgress> shards,
            List<String> unreachable,
            long chunksRequeuedAfterExpiry) {
        public Progress {
            shards = List.copyOf(shards);
            unreachable = List.copyOf(unreachable);
        }

        /** Progress of a run none of whose chunks was requeued after a lease expiry. */
        public Progress(
                long chunks,
                long chunksDone,
                long chunksFailed,
                long cases,
                long casesDone,
                List<ShardProgress> shards,
                List<String> unreachable) {
            this(chunks, chunksDone, chunksFailed, cases, casesDone, shards, unreachable, 0);
        }
    }

    /**
     * One shard's progress. {@code chunksDone}, {@code chunksFailed} and {@code casesDone} are {@code -1} (unknown)
     * when its execution database could not be read.
     *
     * @param placement the execution database holding its records now
     * @param state     its route's state: seeding, active, moving or tombstoned
     */
    public record ShardProgress(
            int shard,
            String placement,
            String state,
            long chunks,
            long chunksDone,
            long chunksFailed,
            long cases,
            long casesDone) {
        /** Whether its execution database was read (its counts are known). */
        public boolean known() {
            return casesDone >= 0;
        }
    }

    /** Whether the run can change no more: settled, failed or cancelled. */
    public boolean finished() {
        return RunLifecycle.TERMINAL.contains(RunState.fromSpelling(status));
    }

    /**
     * Adds this status to a {@code run status --json} document: sets {@code status} (to the value read with the
     * fields below, so the document is consistent), and adds {@code execution}, {@code verdict}, {@code gates},
     * {@code gates_final}, {@code waiting} and, for a failed run, {@code failure_reason}. Every other key is left as it
     * is.
     */
    public void addTo(ObjectNode doc) {
        doc.put("status", status);
        ObjectNode e = doc.putObject("execution");
        e.put("chunks", execution.chunks())
                .put("chunks_done", execution.chunksDone())
                .put("chunks_failed", execution.chunksFailed())
                .put("chunks_requeued_after_expiry", execution.chunksRequeuedAfterExpiry())
                .put("cases", execution.cases())
                .put("cases_done", execution.casesDone());
        ArrayNode unreachable = e.putArray("unreachable");
        execution.unreachable().forEach(unreachable::add);
        ArrayNode shards = e.putArray("shards");
        for (ShardProgress s : execution.shards()) {
            ObjectNode o = shards.addObject()
                    .put("shard", s.shard())
                    .put("placement", s.placement())
                    .put("state", s.state())
                    .put("chunks", s.chunks());
            if (s.known()) {
                o.put("chunks_done", s.chunksDone()).put("chunks_failed", s.chunksFailed());
            } else {
                o.putNull("chunks_done").putNull("chunks_failed");
            }
            o.put("cases", s.cases());
            if (s.known()) {
                o.put("cases_done", s.casesDone());
            } else {
                o.putNull("cases_done");
            }
        }
        doc.put("verdict", verdict.orElse(null));
        // Absent rather than zero for runs without recorded usage: their receipts predate it.
        runUsage().ifPresent(u -> u.putJson(doc.putObject("usage")));
        putAgreement(doc, agreement.get(ALL_CASES));
        ArrayNode g = doc.putArray("gates");
        for (GateResult r : gates) {
            ObjectNode o = g.addObject()
                    .put("name", r.name())
                    .put("planned", r.planned())
                    .put("executed", r.executed())
                    .put("passed", r.passed())
                    .put("failed", r.failed())
                    .put("errored", r.errored())
                    .put("pass_rate", r.passRate())
                    .put("failure_rate", r.failureRate())
                    .put("error_rate", r.errorRate())
                    .put("min_pass_rate", r.minPassRate());
            if (r.passedGate().isPresent()) {
                o.put("passed_gate", r.passedGate().get());
            } else {
                o.putNull("passed_gate");
            }
            ProportionInterval interval = r.interval();
            o.put("stderr", interval.stderr())
                    .put("ci_low", interval.low())
                    .put("ci_high", interval.high())
                    .put("confidence", r.confidence().level())
                    .put("decide", r.decide().wire())
                    .put("decision", r.decision().map(GateDecision::spelling).orElse(null));
            OptionalLong toDecide = r.casesToDecide();
            if (toDecide.isPresent()) {
                o.put("cases_to_decide", toDecide.getAsLong());
            }
            UsageSummary gateUsage = usage.get(r.name());
            if (gateUsage != null) {
                gateUsage.putJson(o.putObject("usage"));
            } else if (!usage.isEmpty()) {
                UsageSummary.NONE.putJson(o.putObject("usage"));
            }
            putAgreement(o, agreement.get(r.name()));
            if (r.passAtK().isPresent()) {
                ObjectNode k = o.putObject("pass_at_k");
                r.passAtKByK().forEach(k::put);
            }
        }
        doc.put("gates_final", gatesFinal);
        // Only for runs whose endpoints have fleet limiters: other runs' documents keep their keys.
        if (!limiters.isEmpty()) {
            ArrayNode l = doc.putArray("limiters");
            limiters.forEach(x -> x.putJson(l.addObject()));
        }
        ArrayNode w = doc.putArray("waiting");
        for (Wait x : waiting) {
            w.addObject()
                    .put("for", x.service().wire())
                    .put("target", x.target())
                    .put("since", x.since().truncatedTo(ChronoUnit.SECONDS).toString())
                    .put("workers", x.workers())
                    .put("error", x.error());
        }
        failureReason.ifPresent(x -> doc.put("failure_reason", x));
        paused.ifPresent(x -> doc.putObject("paused")
                .put("reason", x.reason())
                .put("since", x.since().truncatedTo(ChronoUnit.SECONDS).toString()));
        budget.ifPresent(x -> x.putJson(doc.putObject("budget")));
    }

    /**
     * {@link #addTo} applied to the compact JSON of a preparation status (one object, as
     * {@code dev.vigilo.plan.RunStatus#toJson()} writes it); returns compact JSON, keys in their original order.
     *
     * @throws IllegalArgumentException when {@code runStatusJson} is not a JSON object
     */
    public String mergeInto(String runStatusJson) {
        try {
            JsonNode n = MAPPER.readTree(runStatusJson);
            if (!(n instanceof ObjectNode doc)) {
                throw new IllegalArgumentException("not a JSON object: " + runStatusJson);
            }
            addTo(doc);
            return MAPPER.writeValueAsString(doc);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("not JSON: " + e.getOriginalMessage(), e);
        }
    }

    /** This status alone: {@code run_id} and the keys {@link #addTo} writes. Compact, one line. */
    public String toJson() {
        ObjectNode n = JsonNodeFactory.instance.objectNode();
        n.put("run_id", runId.toString());
        addTo(n);
        return n.toString();
    }

    /** {@code "agreement": {"<panel>": {"alpha": 0.71 | null, "values": 412}}}, when there are panels. */
    private static void putAgreement(ObjectNode o, Map<String, Agreement> panels) {
        if (panels == null || panels.isEmpty()) {
            return;
        }
        ObjectNode a = o.putObject("agreement");
        new java.util.TreeMap<>(panels).forEach((panel, x) -> {
            ObjectNode p = a.putObject(panel);
            if (x.alpha().isPresent()) {
                p.put("alpha", x.alpha().getAsDouble());
            } else {
                p.putNull("alpha");
            }
            p.put("values", x.values());
        });
    }
}
