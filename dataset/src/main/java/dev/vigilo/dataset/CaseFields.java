package dev.vigilo.dataset;

import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * The fields of one case that the catalog and run preparation look at; {@code input}, {@code expected} and
 * {@code metadata} stay opaque bytes inside the case.
 *
 * @param id    the case id, unique within its dataset
 * @param group the case's group, if any
 * @param tags  the case's tags in submitted order (possibly empty)
 */
public record CaseFields(String id, Optional<String> group, List<String> tags) {
    public CaseFields {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(group, "group");
        tags = List.copyOf(tags);
    }
}
