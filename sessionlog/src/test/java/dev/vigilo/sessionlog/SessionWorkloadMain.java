package dev.vigilo.sessionlog;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.IntConsumer;

/**
 * A session-log workload for crash tests: {@code SessionWorkloadMain LOG BATCHES zstd|none} creates LOG (or opens it
 * when it exists) and appends the batches 1..BATCHES the log does not hold yet, two events each, printing {@code ack
 * K} after batch K is durable. Running it again after a crash finishes the same log.
 */
public final class SessionWorkloadMain {
    private SessionWorkloadMain() {}

    public static void main(String[] args) {
        run(
                Path.of(args[0]),
                Integer.parseInt(args[1]),
                Compression.valueOf(args[2].toUpperCase(java.util.Locale.ROOT)),
                k -> {
                    System.out.println("ack " + k);
                });
    }

    /** Creates or opens {@code log} and appends the missing batches, telling {@code acked} each one. */
    static void run(Path log, int batches, Compression compression, IntConsumer acked) {
        WriterOptions options = WriterOptions.defaults().withCompression(compression);
        int present = Files.exists(log) ? lastBatch(log) : 0;
        try (SessionLogWriter w = Files.exists(log)
                ? SessionLogWriter.open(log, new LockFileEpochSource(), options)
                : SessionLogWriter.create(log, WriterTest.HEADER, new LockFileEpochSource(), options)) {
            for (int k = present + 1; k <= batches; k++) {
                w.append(batch(k));
                acked.accept(k);
            }
        }
    }

    static List<ObjectNode> batch(int k) {
        List<ObjectNode> events = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            ObjectNode n = Json.MAPPER.createObjectNode();
            n.put("type", "todo/write")
                    .put("time", 1000L * k + i)
                    .putObject("data")
                    .putArray("todos")
                    .add("b" + k + "-" + i);
            events.add(n);
        }
        return events;
    }

    /** The committed events of {@code log} as the reader serves them, one JSON line each. */
    static List<String> events(Path log) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        SessionCat.cat(log, 0, out);
        String text = out.toString(StandardCharsets.UTF_8);
        return text.isEmpty() ? List.of() : List.of(text.split("\n"));
    }

    /** The highest batch whose events the log holds (0: none). */
    static int lastBatch(Path log) {
        int last = 0;
        for (String line : events(log)) {
            try {
                JsonNode todo =
                        Json.MAPPER.readTree(line).path("data").path("todos").path(0);
                if (todo.isTextual() && todo.textValue().startsWith("b")) {
                    last = Math.max(
                            last,
                            Integer.parseInt(todo.textValue()
                                    .substring(1, todo.textValue().indexOf('-'))));
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return last;
    }
}
