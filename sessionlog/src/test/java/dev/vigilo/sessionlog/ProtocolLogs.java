package dev.vigilo.sessionlog;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Hand-assembled protocol logs for the spec's Measurement table shapes, in either encoding: each batch is one
 * real zstd frame, or (uncompressed) its lines as they are.
 */
final class ProtocolLogs {
    /** the encoded units: zstd frames, or the bytes of each batch's lines; the header first */
    final List<byte[]> frames = new ArrayList<>();

    final List<Manifest.EpochStart> history = new ArrayList<>();
    final Compression compression;

    ProtocolLogs() {
        this(Compression.ZSTD);
    }

    ProtocolLogs(Compression compression) {
        this.compression = compression;
        frames.add(encode(LogBuilder.header() + "\n"));
    }

    private byte[] encode(String text) {
        return compression == Compression.ZSTD
                ? LogBuilder.frame(text)
                : text.getBytes(java.nio.charset.StandardCharsets.UTF_8);
    }

    static String filler(long seq) {
        return "{\"type\":\"todo/write\",\"seq\":" + seq + ",\"time\":" + (1000 + seq) + ",\"data\":{\"todos\":[]}}";
    }

    static String commit(long seq, long epoch) {
        return "{\"type\":\"vigilo/commit\",\"seq\":" + seq + ",\"time\":" + (1000 + seq)
                + ",\"data\":{\"v\":1,\"epoch\":" + epoch + ",\"endSeq\":" + seq + "},\"ignorable\":true}";
    }

    /** A P1 batch: fillers from..to-1 then the commit record at seq {@code to}. */
    ProtocolLogs p1(long from, long to, long epoch) {
        List<String> rows = new ArrayList<>();
        for (long s = from; s < to; s++) {
            rows.add(filler(s));
        }
        rows.add(commit(to, epoch));
        frames.add(encode(LogBuilder.lines(rows)));
        return this;
    }

    /** A batch without commit record: fillers from..to inclusive; records its epoch in the P2 history. */
    ProtocolLogs plain(long from, long to, Long epoch) {
        if (epoch != null
                && (history.isEmpty() || history.get(history.size() - 1).epoch().value() != epoch)) {
            history.add(new Manifest.EpochStart(new Epoch(epoch), size(), from));
        }
        List<String> rows = new ArrayList<>();
        for (long s = from; s <= to; s++) {
            rows.add(filler(s));
        }
        frames.add(encode(LogBuilder.lines(rows)));
        return this;
    }

    long size() {
        return frames.stream().mapToLong(f -> f.length).sum();
    }

    long endOfFrame(int i) {
        long s = 0;
        for (int k = 0; k <= i; k++) {
            s += frames.get(k).length;
        }
        return s;
    }

    ProtocolLogs tornLast(int cut) {
        byte[] last = frames.remove(frames.size() - 1);
        frames.add(Arrays.copyOf(last, last.length - cut));
        return this;
    }

    /**
     * Manifest claiming the first {@code nFrames} units (header included), written under {@code epoch}; for an
     * uncompressed log it counts their lines and names the last line's CRC-32C.
     */
    Manifest manifest(int nFrames, long epoch, long endSeq) {
        byte[] last = frames.get(nFrames - 1);
        long units = nFrames;
        if (compression == Compression.NONE) {
            units = 0;
            for (int i = 0; i < nFrames; i++) {
                for (byte b : frames.get(i)) {
                    if (b == '\n') {
                        units++;
                    }
                }
            }
        }
        return new Manifest(
                new Epoch(epoch),
                endSeq,
                units,
                endOfFrame(nFrames - 1),
                SessionLogWriter.checksum(last, compression),
                history.stream()
                        .filter(h -> h.startOffset() < endOfFrame(nFrames - 1))
                        .toList());
    }

    Path write(Path dir, String name, Manifest m) throws IOException {
        Path f = dir.resolve(name + compression.suffix());
        Files.write(f, LogBuilder.concat(frames));
        if (m != null) {
            Files.write(Manifest.pathFor(f), ManifestCodec.write(m));
        }
        return f;
    }
}
