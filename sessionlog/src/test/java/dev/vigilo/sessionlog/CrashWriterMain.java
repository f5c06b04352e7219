package dev.vigilo.sessionlog;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * A real writer process for the crash test: appends forever from several threads and prints "ack SEQ" after
 * each durable append. Usage: CrashWriterMain LOG THREADS [zstd|none] (the encoding of a log it creates)
 */
public final class CrashWriterMain {
    public static void main(String[] args) throws Exception {
        Path log = Path.of(args[0]);
        int threads = Integer.parseInt(args[1]);
        WriterOptions options = WriterOptions.defaults()
                .withCompression(args.length > 2 && args[2].equals("none") ? Compression.NONE : Compression.ZSTD);
        SessionLogWriter w = Files.exists(log)
                ? SessionLogWriter.open(log, new LockFileEpochSource(), options)
                : SessionLogWriter.create(log, WriterTest.HEADER, new LockFileEpochSource(), options);
        for (int t = 0; t < threads; t++) {
            int id = t;
            Thread th = new Thread(() -> {
                for (int i = 0; ; i++) {
                    AppendResult r = w.append(List.of(WriterTest.todo(id * 1_000_000 + i)));
                    synchronized (System.out) {
                        System.out.println("ack " + r.lastSeq().value());
                        System.out.flush();
                    }
                }
            });
            th.start();
        }
        Thread.sleep(Long.MAX_VALUE);
    }
}
