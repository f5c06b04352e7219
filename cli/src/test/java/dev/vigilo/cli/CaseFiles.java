package dev.vigilo.cli;

import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/** Generates realistic JSONL datasets of a target size for process-level tests and benchmarks. */
final class CaseFiles {
    private CaseFiles() {}

    /** Writes cases until the file reaches at least {@code targetBytes}; returns the case count. */
    static long write(Path file, long targetBytes, int inputChars) throws IOException {
        String padding =
                "lorem ipsum dolor sit amet ".repeat(inputChars / 27 + 1).substring(0, inputChars);
        long written = 0;
        long cases = 0;
        try (OutputStream out = new BufferedOutputStream(Files.newOutputStream(file), 1 << 20)) {
            while (written < targetBytes) {
                byte[] line = ("{\"id\":\"case-" + cases + "\",\"input\":{\"prompt\":\"" + padding + "\",\"n\":" + cases
                                + "},\"expected\":\"" + (cases % 97) + "\",\"group\":\"g" + (cases % 7)
                                + "\",\"tags\":[\"t" + (cases % 3) + "\"]}\n")
                        .getBytes(StandardCharsets.UTF_8);
                out.write(line);
                written += line.length;
                cases++;
            }
        }
        return cases;
    }
}
