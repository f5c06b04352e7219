package dev.vigilo.common.input;

import dev.vigilo.common.errors.InvalidInputException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The one rule for a file a user names as output ({@code --out}): its directory must exist, it must not be a
 * directory, and an existing file is replaced only when the user asked for it ({@code --force}). Commands check
 * before doing any work and then write through a temporary file beside the target, removed on failure, so a failed
 * command leaves neither a partial file nor a temporary one.
 */
public final class OutputFiles {
    private OutputFiles() {}

    /**
     * {@code out}, checked against the rule.
     *
     * @param option the option that named it, for the message (e.g. {@code "--out"})
     * @param force  whether an existing file may be replaced
     * @throws InvalidInputException saying what is wrong and what to do
     */
    public static Path check(Path out, String option, boolean force) {
        Path absolute = out.toAbsolutePath().normalize();
        if (Files.isDirectory(absolute)) {
            throw new InvalidInputException(
                    option + " " + out + " is a directory; name the file to write, e.g. " + out.resolve("out.jsonl"));
        }
        Path parent = absolute.getParent();
        if (parent == null || !Files.isDirectory(parent)) {
            throw new InvalidInputException(option + " " + out + ": the directory " + parent
                    + " does not exist; create it first or choose another " + option);
        }
        if (Files.exists(absolute) && !force) {
            throw new InvalidInputException(option + " " + out + " already exists; choose another " + option
                    + ", or pass --force to replace it");
        }
        if (Files.exists(absolute) && !Files.isRegularFile(absolute)) {
            throw new InvalidInputException(
                    option + " " + out + " exists and is not a regular file; choose another " + option);
        }
        return out;
    }
}
