package dev.vigilo.web;

import dev.vigilo.dataset.DatasetCatalog;
import dev.vigilo.exec.view.CaseResults;
import dev.vigilo.exec.view.RunCatalog;
import java.util.Arrays;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import java.util.function.LongPredicate;

/**
 * The results explorer's filters outside the server: which cases of a run a list of the explorer holds, for {@code
 * vigilo run results --evaluator/--error-type/--group/--tag/--search} (docs/cli.md), so the command and the
 * dashboard's downloads list exactly the same cases. Builds the run's index once (one pass over its receipts and its
 * dataset's case files; docs/web.md, "The results explorer") and answers by ordinal.
 */
public final class ResultLists {
    private ResultLists() {}

    /**
     * The explorer's filters beyond outcome and gate (which {@link CaseResults.Filter} carries).
     *
     * @param evaluator only the cases this evaluator scored; with an outcome, its own result is that outcome
     * @param errorType only the cases with this error type (the agent's, else the first evaluator's that errored)
     * @param group     only the cases of this dataset group
     * @param tag       only the cases with this dataset tag
     * @param search    case-insensitive text in the id, input, output or reason (their first 200 bytes)
     */
    public record Filter(
            Optional<String> evaluator,
            Optional<String> errorType,
            Optional<String> group,
            Optional<String> tag,
            Optional<String> search) {
        public Filter {
            Objects.requireNonNull(evaluator, "evaluator");
            Objects.requireNonNull(errorType, "errorType");
            Objects.requireNonNull(group, "group");
            Objects.requireNonNull(tag, "tag");
            Objects.requireNonNull(search, "search");
        }

        /** Whether any filter is given (without one every case is listed and no index is needed). */
        public boolean any() {
            return evaluator.isPresent()
                    || errorType.isPresent()
                    || group.isPresent()
                    || tag.isPresent()
                    || search.isPresent();
        }
    }

    /**
     * The ordinals of the run's executed cases that {@code base} and {@code filter} list, as a predicate.
     *
     * @throws dev.vigilo.common.errors.NotFoundException     no such run
     * @throws dev.vigilo.common.errors.InvalidInputException a gate or evaluator the run does not have, a search over
     *                                                        {@value ResultsExplorer#MAX_SEARCH} characters
     * @throws dev.vigilo.common.errors.DamagedException      a receipt or dataset case file is missing or altered
     */
    public static LongPredicate listed(
            DashboardSources.Databases sources, UUID runId, CaseResults.Filter base, Filter filter) {
        if (filter.search().map(String::length).orElse(0) > ResultsExplorer.MAX_SEARCH) {
            throw new dev.vigilo.common.errors.InvalidInputException(
                    "--search is longer than " + ResultsExplorer.MAX_SEARCH + " characters; search for a shorter part");
        }
        try (CaseResults cases = new CaseResults(sources.placements(), sources.storage());
                Stores stores = new Stores(Optional.of(sources.storage()))) {
            CaseIndex index = ResultsExplorer.build(
                    runId, cases, new RunCatalog(sources.placements()), new DatasetCatalog(sources.control()), stores);
            long[] ordinals = index.ordinals(new CaseIndex.Query(
                    base.outcome(),
                    base.gate(),
                    filter.evaluator(),
                    filter.errorType(),
                    filter.group(),
                    filter.tag(),
                    filter.search().map(String::strip).filter(x -> !x.isEmpty()),
                    CaseIndex.Sort.ORDINAL,
                    false));
            return ordinal -> Arrays.binarySearch(ordinals, ordinal) >= 0;
        }
    }
}
