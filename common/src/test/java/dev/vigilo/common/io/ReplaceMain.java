package dev.vigilo.common.io;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

/** Test workload: {@code ReplaceMain FILE TEXT} replaces FILE with TEXT through {@link AtomicFiles#replace}. */
public final class ReplaceMain {
    private ReplaceMain() {}

    public static void main(String[] args) throws IOException {
        AtomicFiles.replace(Path.of(args[0]), args[1].getBytes(StandardCharsets.UTF_8), "test.replace");
        System.out.println("replaced");
    }
}
