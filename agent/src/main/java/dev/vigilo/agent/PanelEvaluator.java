package dev.vigilo.agent;

import java.math.BigDecimal;
import java.math.MathContext;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;

/**
 * {@code panel}: two or more judges grade the same output, one after another, and their normalised scores
 * aggregate to the panel's (docs/formats/agent-protocol.md, "Judges"): {@code mean} or {@code min} of the scores
 * that were given, passing at {@code pass_score} (the mean compared exactly, in decimal, as an epochs' mean is); {@code majority}, passing when more than half of the judges that
 * scored passed (each at its own {@code pass_score}), the score being the fraction that passed. Each judge's vote is
 * on the verdict. Fewer than two scoring judges is no panel: an evaluator error ({@code unscored} when every missing
 * judge was unscored, else the first other judge error's type), the votes kept. Thread-safe.
 */
final class PanelEvaluator implements Evaluator {
    /** How judges' scores aggregate. */
    enum Aggregate {
        MEAN,
        MIN,
        MAJORITY
    }

    /** The least number of judges that must score for the panel to score. */
    static final int MIN_SCORED = 2;

    private final String name;
    private final List<String> judgeNames;
    private final List<JudgeEvaluator> judges;
    private final Aggregate aggregate;
    private final double passScore;

    PanelEvaluator(
            String name, List<String> judgeNames, List<JudgeEvaluator> judges, Aggregate aggregate, double passScore) {
        this.name = name;
        this.judgeNames = List.copyOf(judgeNames);
        this.judges = List.copyOf(judges);
        this.aggregate = aggregate;
        this.passScore = passScore;
    }

    @Override
    public Verdict evaluate(CaseRecord caseRecord, com.fasterxml.jackson.databind.JsonNode caseTree, String output) {
        return evaluate(caseRecord, caseTree, output, EvaluationContext.NONE);
    }

    @Override
    public Verdict evaluate(
            CaseRecord caseRecord,
            com.fasterxml.jackson.databind.JsonNode caseTree,
            String output,
            EvaluationContext context) {
        List<Verdict> verdicts = new ArrayList<>();
        for (JudgeEvaluator judge : judges) {
            Verdict v = judge.evaluate(caseRecord, caseTree, output, context);
            verdicts.add(v);
            if (cancelled(v)) {
                break;
            }
        }
        return combine(verdicts);
    }

    /**
     * As {@link #evaluate(CaseRecord, com.fasterxml.jackson.databind.JsonNode, String, EvaluationContext)}, the
     * judges one after another without a thread while their models answer ({@link
     * JudgeEvaluator#evaluateAsync}); cancelling the future cancels the judge call in flight.
     */
    @Override
    public CompletableFuture<Verdict> evaluateAsync(
            CaseRecord caseRecord,
            com.fasterxml.jackson.databind.JsonNode caseTree,
            String output,
            EvaluationContext context,
            Executor work) {
        List<Verdict> verdicts = new ArrayList<>();
        return SequentialAsync.run(new SequentialAsync.Steps<Verdict, Verdict>() {
            @Override
            public CompletableFuture<Verdict> next() {
                int j = verdicts.size();
                return j < judges.size()
                        ? judges.get(j).evaluateAsync(caseRecord, caseTree, output, context, work)
                        : null;
            }

            @Override
            public boolean accept(Verdict v) {
                verdicts.add(v);
                return !cancelled(v); // the judges after a cancelled one do not run
            }

            @Override
            public Verdict result() {
                return combine(verdicts);
            }
        });
    }

    private static boolean cancelled(Verdict v) {
        return v.error().map(e -> e.type() == EvaluatorErrorType.CANCELLED).orElse(false);
    }

    /**
     * The panel's verdict from its judges' verdicts, in judge order (the last one cancelled when the panel was
     * cancelled before its other judges ran).
     */
    private Verdict combine(List<Verdict> verdicts) {
        List<JudgeVote> votes = new ArrayList<>();
        List<TokenUsage> usage = new ArrayList<>();
        List<Double> scores = new ArrayList<>();
        int passed = 0;
        Optional<EvaluatorError> firstOther = Optional.empty();
        List<String> problems = new ArrayList<>();
        for (int j = 0; j < verdicts.size(); j++) {
            Verdict v = verdicts.get(j);
            usage.addAll(v.usage());
            String judge = judgeNames.get(j);
            if (v.error().isPresent()) {
                EvaluatorError e = v.error().get();
                votes.add(new JudgeVote(
                        judge, OptionalDouble.empty(), Optional.of(e.type().code() + ": " + e.message())));
                if (e.type() == EvaluatorErrorType.CANCELLED) {
                    return Verdict.error(
                                    EvaluatorErrorType.CANCELLED,
                                    "panel \"" + name + "\" was cancelled (the worker was interrupted)")
                            .withUsage(usage)
                            .withVotes(votes);
                }
                if (e.type() != EvaluatorErrorType.UNSCORED && firstOther.isEmpty()) {
                    firstOther = Optional.of(e);
                }
                problems.add("judge \"" + judge + "\": " + e.type().code());
                continue;
            }
            votes.add(new JudgeVote(judge, OptionalDouble.of(v.score()), v.reason()));
            scores.add(v.score());
            if (v.passed()) {
                passed++;
            }
        }
        if (scores.size() < MIN_SCORED) {
            EvaluatorErrorType type = firstOther.map(EvaluatorError::type).orElse(EvaluatorErrorType.UNSCORED);
            return Verdict.error(
                            type,
                            "panel \"" + name + "\": " + scores.size() + " of " + judges.size() + " judges scored, at"
                                    + " least " + MIN_SCORED + " must (" + String.join("; ", problems) + "); each"
                                    + " judge's error is in the result's votes")
                    .withUsage(usage)
                    .withVotes(votes);
        }
        double score;
        boolean ok;
        String rule;
        switch (aggregate) {
            case MEAN -> {
                BigDecimal sum = BigDecimal.ZERO;
                for (double d : scores) {
                    sum = sum.add(new BigDecimal(d));
                }
                score = clamp(sum.divide(BigDecimal.valueOf(scores.size()), MathContext.DECIMAL128)
                        .doubleValue());
                // Exactly, in decimal, as epochs' means are (stats' Reducer): 0.8, 0.6, 0.4 meet 0.6.
                ok = sum.compareTo(new BigDecimal(passScore).multiply(BigDecimal.valueOf(scores.size()))) >= 0;
                rule = "mean " + shown(score) + (ok ? " >= " : " < ") + "pass_score " + shown(passScore);
            }
            case MIN -> {
                score = scores.stream().mapToDouble(Double::doubleValue).min().orElseThrow();
                ok = score >= passScore;
                rule = "min " + shown(score) + (ok ? " >= " : " < ") + "pass_score " + shown(passScore);
            }
            default -> {
                score = (double) passed / scores.size();
                ok = 2 * passed > scores.size();
                rule = passed + " of " + scores.size() + " judges passed: " + (ok ? "a majority" : "no majority");
            }
        }
        StringBuilder reason = new StringBuilder(rule).append(" (");
        for (int j = 0; j < votes.size(); j++) {
            JudgeVote vote = votes.get(j);
            reason.append(j == 0 ? "" : ", ")
                    .append(vote.judge())
                    .append(' ')
                    .append(vote.score().isPresent() ? shown(vote.score().getAsDouble()) : "unscored");
        }
        reason.append(')');
        return new Verdict(ok, score, Optional.empty(), Optional.of(reason.toString()))
                .withUsage(usage)
                .withVotes(votes);
    }

    /** A floating-point mean of scores in [0, 1] may stray past 1 by an ulp. */
    private static double clamp(double d) {
        return Math.max(0, Math.min(1, d));
    }

    private static String shown(double d) {
        return JudgeScale.shown(Math.round(d * 10_000) / 10_000.0);
    }
}
