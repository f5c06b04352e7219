package dev.vigilo.common.input;

import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.common.errors.UnavailableException;
import dev.vigilo.common.io.AtomicFiles;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The one rule for a file a user names as output ({@code --out}): its directory must exist, it must not be a
 * directory, and an existing file is replaced only when the user asked for it ({@code --force}). Commands check
 * before doing any work ({@link #check}) and then write through {@link #write}, the crash-safe write of
 * {@link AtomicFiles}: a failed command leaves neither a partial file nor a temporary one, and without
 * {@code --force} a file that appeared while the command ran is not replaced either.
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

    /**
     * Writes {@code out} crash-safely ({@link AtomicFiles#write(Path, AtomicFiles.Mode, AtomicFiles.StreamContent)}:
     * when this returns the file holds the whole content durably; when it throws, {@code out} is as it was): replacing
     * an existing file only when {@code force}. Call {@link #check} first, before the work that produces the content.
     *
     * @param option  the option that named it, for the message (e.g. {@code "--out"})
     * @param content writes the file's content; an {@link UncheckedIOException} it throws counts as a failed write
     * @return what {@code content} returned
     * @throws InvalidInputException when {@code out} appeared meanwhile and {@code force} is false
     * @throws UnavailableException  when the file cannot be written
     */
    public static <T> T write(Path out, String option, boolean force, AtomicFiles.StreamContent<T> content) {
        Path target = out.toAbsolutePath().normalize();
        try {
            return AtomicFiles.write(target, force ? AtomicFiles.Mode.REPLACE : AtomicFiles.Mode.CREATE_NEW, content);
        } catch (FileAlreadyExistsException e) {
            throw new InvalidInputException(option + " " + out + " already exists; choose another " + option
                    + ", or pass --force to replace it");
        } catch (UncheckedIOException e) {
            throw new UnavailableException(
                    "cannot write " + out + ": " + e.getCause().getMessage(), e);
        } catch (IOException e) {
            throw new UnavailableException("cannot write " + out + ": " + e.getMessage(), e);
        }
    }
}
