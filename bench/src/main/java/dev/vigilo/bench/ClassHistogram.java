package dev.vigilo.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The live objects of another JVM by class, as {@code jcmd PID GC.class_histogram} prints them (the command runs a
 * full collection first, so only reachable objects count). Used to say what a worker's heap holds per call in flight:
 * the difference of two histograms taken at two concurrencies, divided by the difference in calls.
 *
 * @param bytesByClass live bytes per class name (module suffix removed)
 * @param countByClass live instances per class name
 */
record ClassHistogram(Map<String, Long> bytesByClass, Map<String, Long> countByClass) {
    private static final Pattern ROW = Pattern.compile("^\\s*\\d+:\\s+(\\d+)\\s+(\\d+)\\s+(\\S+)");

    /** The live heap in all. */
    long totalBytes() {
        return bytesByClass.values().stream().mapToLong(Long::longValue).sum();
    }

    /** Runs {@code jcmd pid GC.class_histogram} (the JDK's, beside this JVM's java) and parses its table. */
    static ClassHistogram of(long pid) throws IOException, InterruptedException {
        Path jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd");
        Process p = new ProcessBuilder(jcmd.toString(), Long.toString(pid), "GC.class_histogram")
                .redirectErrorStream(true)
                .start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (p.waitFor() != 0) {
            throw new IOException("jcmd " + pid + " GC.class_histogram exited " + p.exitValue() + ": " + out);
        }
        return parse(out);
    }

    static ClassHistogram parse(String table) {
        Map<String, Long> bytes = new HashMap<>();
        Map<String, Long> counts = new HashMap<>();
        for (String line : table.split("\n")) {
            Matcher m = ROW.matcher(line);
            if (m.find()) {
                bytes.merge(m.group(3), Long.parseLong(m.group(2)), Long::sum);
                counts.merge(m.group(3), Long.parseLong(m.group(1)), Long::sum);
            }
        }
        return new ClassHistogram(Map.copyOf(bytes), Map.copyOf(counts));
    }

    /** One class's share of a difference: bytes and instances per call. */
    record PerCall(String className, double bytes, double instances) {}

    /**
     * What {@code larger} holds beyond {@code smaller}, per call of {@code calls} (the difference in calls in flight
     * between them), the {@code top} largest classes first.
     */
    static List<PerCall> perCall(ClassHistogram smaller, ClassHistogram larger, int calls, int top) {
        Set<String> names = new HashSet<>(smaller.bytesByClass.keySet());
        names.addAll(larger.bytesByClass.keySet());
        List<PerCall> rows = new ArrayList<>();
        for (String name : names) {
            long bytes = larger.bytesByClass.getOrDefault(name, 0L) - smaller.bytesByClass.getOrDefault(name, 0L);
            long count = larger.countByClass.getOrDefault(name, 0L) - smaller.countByClass.getOrDefault(name, 0L);
            rows.add(new PerCall(name, (double) bytes / calls, (double) count / calls));
        }
        rows.sort(Comparator.comparingDouble(PerCall::bytes).reversed());
        return rows.subList(0, Math.min(top, rows.size()));
    }
}
