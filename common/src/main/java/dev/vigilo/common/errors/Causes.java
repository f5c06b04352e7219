package dev.vigilo.common.errors;

import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The one walk along a failure's cause chain: the chain itself (safe against a cause that is its own cause, or any
 * cycle), the first cause of a type, and the root-cause message that Vigilo puts into its one-line errors. Stateless.
 */
public final class Causes {
    private static final Pattern WHITESPACE = Pattern.compile("\\s+");

    private Causes() {}

    /** {@code e} and its causes, outermost first; each exception once even if the chain loops. */
    public static List<Throwable> chain(Throwable e) {
        List<Throwable> chain = new ArrayList<>();
        Set<Throwable> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        for (Throwable t = e; t != null && seen.add(t); t = t.getCause()) {
            chain.add(t);
        }
        return chain;
    }

    /** The first exception of {@code type} in {@code e}'s chain ({@code e} included), outermost first. */
    public static <T extends Throwable> Optional<T> find(Throwable e, Class<T> type) {
        for (Throwable t : chain(e)) {
            if (type.isInstance(t)) {
                return Optional.of(type.cast(t));
            }
        }
        return Optional.empty();
    }

    /**
     * What went wrong at the bottom of {@code e}, for a one-line error: the innermost non-blank message of the chain
     * (wrappers repeat or hide it), on one line (each run of white space, line breaks included, one space), masked ({@link Secrets#mask}); the innermost exception's
     * simple class name when no exception has a message.
     */
    public static String rootMessage(Throwable e) {
        List<Throwable> chain = chain(e);
        for (int i = chain.size() - 1; i >= 0; i--) {
            String message = chain.get(i).getMessage();
            if (message != null && !message.isBlank()) {
                return Secrets.mask(WHITESPACE.matcher(message).replaceAll(" ").strip());
            }
        }
        return chain.get(chain.size() - 1).getClass().getSimpleName();
    }
}
