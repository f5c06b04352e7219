package dev.vigilo.agent;

import java.util.Objects;

/**
 * One case as the dataset stored it: the submitted case line, byte for byte ({@code {"id":..,"input":..,
 * "expected":..,...}}, docs/formats/dataset.md). The agent and evaluators receive exactly these bytes.
 *
 * @param id      the case's id (for messages; must equal the {@code id} inside {@link #json()})
 * @param ordinal the case's 0-based position in the dataset
 * @param json    the case line as UTF-8 JSON; callers must not modify it after handing it over
 */
public record CaseRecord(String id, long ordinal, byte[] json) {
    public CaseRecord {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(json, "json");
        if (ordinal < 0) {
            throw new IllegalArgumentException("ordinal must be >= 0, got " + ordinal);
        }
    }
}
