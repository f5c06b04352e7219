package dev.vigilo.sessionlog;

import java.nio.file.Path;

/** Generates a large valid log for manual streaming checks: BigLogMain OUT SIZE_MB (prints the event count). */
public final class BigLogMain {
    public static void main(String[] args) throws Exception {
        long t0 = System.nanoTime();
        long events = BigLog.generate(Path.of(args[0]), Long.parseLong(args[1]) * 1_000_000L, 42);
        System.out.printf("events=%d seconds=%.1f%n", events, (System.nanoTime() - t0) / 1e9);
    }
}
