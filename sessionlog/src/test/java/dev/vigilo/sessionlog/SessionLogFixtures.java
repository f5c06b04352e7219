package dev.vigilo.sessionlog;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Test fixtures published in this module's test-jar for the session-log benchmark ({@code bench} module): the
 * official reader (referee), generated event rows and frames, frame positions of a log and frame decoding. Thin public entry points
 * over the package's test helpers; not product API.
 */
public final class SessionLogFixtures {
    private SessionLogFixtures() {}

    /** The installed referee: holds {@code node_modules/.bin/node} and {@code referee.mjs} (installed on first use). */
    public static Path refereeDir() {
        return Referee.get().dir;
    }

    /** The referee's sources (holds {@code gen-big.mjs}). */
    public static Path refereeSourceDir() {
        return Referee.sourceDir();
    }

    /**
     * Start and end byte offsets of every complete zstd frame of a log, read through a small window as the verifier
     * scans (the file may be larger than the heap).
     */
    public static List<long[]> frameBounds(Path log) throws IOException {
        List<long[]> out = new ArrayList<>();
        try (FileChannel ch = FileChannel.open(log)) {
            FrameScanner sc = new FrameScanner(ch, ch.size(), 0);
            for (FrameScanner.Frame f; (f = sc.next()) != null; ) {
                out.add(new long[] {f.start(), f.end()});
            }
        }
        return out;
    }

    /** The bytes {@code [start, end)} of a file, as the verifier reads a frame. */
    public static byte[] readRange(FileChannel ch, long start, long end) throws IOException {
        return FrameCodec.readRange(ch, start, end);
    }

    /** Decompresses one complete frame (checksum verified) into {@code out}, as the verifier decodes it. */
    public static void decodeFrame(byte[] frame, ByteArrayOutputStream out) throws IOException {
        FrameCodec.decodeComplete(frame, out::write, new byte[1 << 16]);
    }

    /** The rows (JSON, without newlines) of {@code n} complete turns of valid events from seq 0, fixed by {@code seed}. */
    public static List<String> turns(long seed, int n, boolean chunks) {
        return LogBuilder.turns(seed, n, chunks);
    }

    /** A session header line (without its newline). */
    public static String header() {
        return LogBuilder.header();
    }

    /** One checksummed zstd frame holding {@code text}. */
    public static byte[] frame(String text) {
        return LogBuilder.frame(text);
    }

    /** The rows joined, each followed by a newline. */
    public static String lines(List<String> rows) {
        return LogBuilder.lines(rows);
    }

    /** The parts concatenated. */
    public static byte[] concat(List<byte[]> parts) {
        return LogBuilder.concat(parts);
    }
}
