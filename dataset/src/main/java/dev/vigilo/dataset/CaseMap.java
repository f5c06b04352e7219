package dev.vigilo.dataset;

import dev.vigilo.common.errors.InvalidInputException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * How the fields of a source record (a CSV row, a JSON object of a JSON lines file, a generated item) become a case:
 * {@code --map id=item_id,input=question,expected=answer,group=topic,tags=labels,metadata.K=field}. Each entry names
 * a case field (a target) and the record's field it is taken from (a source). {@code id} and {@code input} must be
 * mapped; a CSV cell is text unless its source is written {@code FIELD:json}, which parses the cell as JSON.
 *
 * <p>The rules a mapped record follows are in docs/formats/dataset.md ("Upload input: other formats"): a source
 * field missing from a record is an error naming the record; an empty or null value of an optional target is left
 * out of the case.
 *
 * @param entries the targets in the order given, each with its source
 */
public record CaseMap(List<Entry> entries) {
    /** The case fields a map may name, besides {@code metadata.KEY}. */
    private static final List<String> TARGETS = List.of("id", "input", "expected", "group", "tags");

    private static final Pattern METADATA_KEY = Pattern.compile("metadata\\.[A-Za-z0-9_.-]{1,128}");

    /** One target and its source; {@code json}: a CSV cell is parsed as JSON. */
    public record Entry(String target, String source, boolean json) {
        public Entry {
            Objects.requireNonNull(target, "target");
            Objects.requireNonNull(source, "source");
        }

        /** The metadata key of a {@code metadata.KEY} target. */
        Optional<String> metadataKey() {
            return target.startsWith("metadata.") ? Optional.of(target.substring(9)) : Optional.empty();
        }
    }

    public CaseMap {
        entries = List.copyOf(entries);
    }

    /**
     * The identity map of a CSV file's header: every column named like a case field ({@code id}, {@code input},
     * {@code expected}, {@code group}, {@code tags}, {@code metadata.KEY}) is that field; other columns are errors.
     */
    static CaseMap ofHeader(List<String> header) {
        List<Entry> entries = new ArrayList<>();
        for (String column : header) {
            entries.add(new Entry(column, column, false));
        }
        return new CaseMap(entries);
    }

    /**
     * Parses {@code spec} ({@code TARGET=SOURCE[:json],...}).
     *
     * @param where names the option in errors, e.g. {@code --map}
     * @throws InvalidInputException naming the entry that is wrong
     */
    public static CaseMap parse(String spec, String where) {
        Objects.requireNonNull(spec, "spec");
        Map<String, Entry> byTarget = new LinkedHashMap<>();
        for (String part : spec.split(",", -1)) {
            String item = part.strip();
            int eq = item.indexOf('=');
            if (eq <= 0 || eq == item.length() - 1) {
                throw new InvalidInputException(where + ": \"" + item + "\" is not TARGET=SOURCE; write for example"
                        + " id=item_id,input=question,expected=answer");
            }
            String target = item.substring(0, eq).strip();
            String source = item.substring(eq + 1).strip();
            boolean json = source.endsWith(":json");
            if (json) {
                source = source.substring(0, source.length() - 5);
            }
            if (source.isEmpty()) {
                throw new InvalidInputException(where + ": \"" + item + "\" names no source field");
            }
            if (!TARGETS.contains(target) && !METADATA_KEY.matcher(target).matches()) {
                throw new InvalidInputException(where + ": \"" + target + "\" is not a case field; map onto id, input,"
                        + " expected, group, tags or metadata.KEY");
            }
            if (byTarget.put(target, new Entry(target, source, json)) != null) {
                throw new InvalidInputException(
                        where + ": \"" + target + "\" is mapped twice; map each case field once");
            }
        }
        CaseMap map = new CaseMap(List.copyOf(byTarget.values()));
        map.requireIdAndInput(where);
        return map;
    }

    /** Fails unless {@code id} and {@code input} are mapped. */
    void requireIdAndInput(String where) {
        for (String needed : List.of("id", "input")) {
            if (entries.stream().noneMatch(e -> e.target().equals(needed))) {
                throw new InvalidInputException(
                        where + ": nothing is mapped onto \"" + needed + "\"; add " + needed + "=FIELD");
            }
        }
    }

    /** The targets that are not case fields (for a header taken as the map). */
    List<String> unknownTargets() {
        return entries.stream()
                .map(Entry::target)
                .filter(t -> !TARGETS.contains(t) && !METADATA_KEY.matcher(t).matches())
                .toList();
    }

    /** The source of {@code id}. */
    String idSource() {
        return entries.stream()
                .filter(e -> e.target().equals("id"))
                .findFirst()
                .orElseThrow()
                .source();
    }

    /** The canonical spelling, {@code TARGET=SOURCE[:json]} joined by commas: what catalog entries record. */
    @Override
    public String toString() {
        StringBuilder b = new StringBuilder();
        for (Entry e : entries) {
            if (b.length() > 0) {
                b.append(',');
            }
            b.append(e.target()).append('=').append(e.source()).append(e.json() ? ":json" : "");
        }
        return b.toString();
    }
}
