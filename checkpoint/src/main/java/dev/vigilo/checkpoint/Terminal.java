package dev.vigilo.checkpoint;

/** Terminal states of an item, stored lower-case in the {@code terminal} column. */
public enum Terminal {
    COMPLETED,
    FILTERED;

    /** Column value: {@code completed} or {@code filtered}. */
    public String column() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }

    /** Parses a column value; throws {@link LogFormatException} for anything else. */
    public static Terminal fromColumn(String s) {
        return switch (s) {
            case "completed" -> COMPLETED;
            case "filtered" -> FILTERED;
            default -> throw new LogFormatException("unknown terminal state '" + s + "'");
        };
    }
}
