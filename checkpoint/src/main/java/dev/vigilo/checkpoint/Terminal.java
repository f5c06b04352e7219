package dev.vigilo.checkpoint;

import dev.vigilo.common.errors.DamagedException;

/** Terminal states of an item, stored lower-case in the {@code terminal} column. */
public enum Terminal {
    COMPLETED,
    FILTERED;

    /** Column value: {@code completed} or {@code filtered}. */
    public String column() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }

    /** Parses a column value; throws {@link DamagedException} for anything else. */
    public static Terminal fromColumn(String s) {
        return switch (s) {
            case "completed" -> COMPLETED;
            case "filtered" -> FILTERED;
            default -> throw new DamagedException("unknown terminal state '" + s + "'");
        };
    }
}
