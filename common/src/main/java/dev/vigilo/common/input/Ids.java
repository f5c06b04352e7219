package dev.vigilo.common.input;

import dev.vigilo.common.errors.InvalidInputException;
import java.util.UUID;
import java.util.regex.Pattern;

/**
 * Parses the ids users type (run ids, upload ids). An id is accepted only in its canonical form, the one Vigilo
 * prints: a UUID of 36 lowercase hexadecimal digits and hyphens grouped 8-4-4-4-12, and not the nil UUID. Java's
 * {@link UUID#fromString} is lenient ({@code 1-2-3-4-5} parses), so two spellings could name one id; refusing the
 * other spellings keeps every id printed, stored and typed identical.
 */
public final class Ids {
    private static final Pattern CANONICAL =
            Pattern.compile("[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}");
    private static final UUID NIL = new UUID(0, 0);

    private Ids() {}

    /**
     * The UUID {@code text} spells canonically.
     *
     * @param where where the id came from, for the message (e.g. {@code "--run-id"})
     * @param noun  what the id names, for the message (e.g. {@code "run id"})
     * @param hint  what to do, for the message (e.g. {@code "see `vigilo dataset list`"})
     * @throws InvalidInputException when {@code text} is not a canonical, non-nil UUID
     */
    public static UUID uuid(String text, String where, String noun, String hint) {
        if (text == null || !CANONICAL.matcher(text).matches()) {
            throw new InvalidInputException(
                    where + ": " + Names.quote(text) + " is not a" + (startsWithVowel(noun) ? "n " : " ") + noun
                            + ": expected a lowercase UUID such as 3f2b6c1e-8d4a-4e7b-9c0d-1a2b3c4d5e6f; " + hint);
        }
        UUID id = UUID.fromString(text);
        if (id.equals(NIL)) {
            throw new InvalidInputException(where + ": the nil UUID is not a valid " + noun + "; " + hint);
        }
        return id;
    }

    private static boolean startsWithVowel(String noun) {
        return !noun.isEmpty() && "aeiou".indexOf(Character.toLowerCase(noun.charAt(0))) >= 0;
    }
}
