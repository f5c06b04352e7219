package dev.vigilo.datagen;

import dev.vigilo.checkpoint.CheckpointLog;
import dev.vigilo.checkpoint.ExperimentRecords;
import java.math.BigDecimal;
import java.util.Optional;

/**
 * The record beside an experiment's log that says its runs have a budget, and the last limit a run applied: {@code
 * <experiment>/budget/budget.json}, {@code {"max_cost": "0.1", "version": 1}} (an {@link ExperimentRecords}
 * record). The budget itself lives in the control database; this record only lets {@code datagen status}, which reads
 * no pipeline file, know that it should open that database and read it (and leaves a status of an experiment without
 * a budget free of any database).
 */
final class BudgetRecord {
    static final String DIR = "budget";
    static final int FORMAT_VERSION = 1;
    private static final String NAME = "budget";

    private BudgetRecord() {}

    /** Records {@code maxCost} as the experiment's budget (a lost race to another process's write is fine). */
    static void write(CheckpointLog log, BigDecimal maxCost) {
        String json = Json.canonical(Json.MAPPER
                .createObjectNode()
                .put("max_cost", maxCost.toPlainString())
                .put("version", FORMAT_VERSION));
        try (ExperimentRecords r = log.records(DIR)) {
            Optional<ExperimentRecords.Versioned> now = r.read(NAME);
            if (now.isPresent() && now.get().json().equals(json)) {
                return;
            }
            // Exactly one of concurrent writers wins; each writes the max_cost of the same pipeline file, or of a
            // newer one, and the control database's row keeps the limit that counts.
            r.write(NAME, now.map(ExperimentRecords.Versioned::version).orElse(null), json);
        }
    }

    /** The limit the last run recorded; empty when no run of the experiment had a budget. */
    static Optional<BigDecimal> read(CheckpointLog log) {
        try (ExperimentRecords r = log.records(DIR)) {
            return r.read(NAME).map(v -> {
                try {
                    com.fasterxml.jackson.databind.JsonNode n = Json.parse(v.json());
                    if (n.path("version").asInt(FORMAT_VERSION) > FORMAT_VERSION) {
                        throw new dev.vigilo.common.errors.DamagedException("budget record version "
                                + n.path("version").asInt() + " is newer than this Vigilo reads (" + FORMAT_VERSION
                                + "); upgrade Vigilo");
                    }
                    return new BigDecimal(n.path("max_cost").asText());
                } catch (com.fasterxml.jackson.core.JsonProcessingException | NumberFormatException e) {
                    throw new dev.vigilo.common.errors.DamagedException(
                            "the budget record of the experiment is not {\"max_cost\": \"D\"}: " + v.json(), e);
                }
            });
        }
    }
}
