package dev.vigilo.sessionlog;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.vigilo.common.crash.CrashPoints;
import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.common.errors.UnavailableException;
import dev.vigilo.common.io.AtomicFiles;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;

/**
 * Rewrites the committed view of a log into a new file: the original header (verbatim), the committed stored
 * rows (verbatim bytes; cut packed rows re-serialized) re-framed into frames of about {@code targetFrameBytes}
 * plaintext, optionally the closers, and for protocol logs a final commit record (and a fresh manifest for P2).
 * Written to a temp file, fsynced, then published atomically. The output keeps the input's encoding unless its
 * name claims the other one ({@code *.jsonl} / {@code *.zstd}): a rewrite can thus also compress or decompress.
 */
final class Rewriter {
    record Result(
            VerifyReport before,
            Path output,
            long framesWritten,
            long bytesWritten,
            long rowsWritten,
            long closersWritten,
            Path backup) {}

    private Rewriter() {}

    static Result rewrite(Path in, Path out, boolean inPlace, long targetFrameBytes, boolean addClosers) {
        return rewrite(in, out, inPlace, false, targetFrameBytes, addClosers);
    }

    /** As above; {@code replaceOut} lets a rewrite to {@code out} replace an existing file there, atomically. */
    static Result rewrite(
            Path in, Path out, boolean inPlace, boolean replaceOut, long targetFrameBytes, boolean addClosers) {
        if (targetFrameBytes < 1) {
            throw new IllegalArgumentException("target frame size must be >= 1 byte");
        }
        Path target = inPlace ? in : out;
        WriterLease lease = null;
        try {
            // hold the writer lock while rewriting in place, so no live writer appends to the old file meanwhile
            LogReader.Outcome pre = LogReader.read(in, null);
            if (!pre.report().accepted()) {
                throw new CorruptSessionLogException(
                        "cannot rewrite " + in + ": it is rejected ("
                                + pre.report().error() + ")",
                        pre.report().errorOffset() == null ? -1 : pre.report().errorOffset());
            }
            Epoch epoch = pre.maxEpoch() == null ? new Epoch(0) : pre.maxEpoch();
            if (inPlace) {
                lease = new LockFileEpochSource().acquire(in, epoch.next());
                epoch = lease.epoch();
            }
            if (!inPlace && !replaceOut && Files.exists(out)) {
                throw new InvalidInputException(
                        out + " already exists; choose another --out, or pass --force to replace it");
            }
            Path tmp = AtomicFiles.tempBeside(target);
            Compression from = pre.compression();
            Compression to = inPlace || Compression.claimedBy(target) == null ? from : Compression.claimedBy(target);
            boolean protocol = pre.report().channel() != Channel.NONE;
            long[] counts = new long[4]; // frames, rows, lastSeq, lastWasCommit
            counts[2] = -1;
            List<Manifest.EpochStart> hist = new ArrayList<>();
            long[] lastChecksum = {-1};
            long[] time = {0};
            LogReader.Outcome o;
            try (FileChannel src = FileChannel.open(in, StandardOpenOption.READ);
                    FileChannel dst = FileChannel.open(tmp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
                byte[] header = FrameCodec.readRange(src, 0, pre.headerEnd());
                if (from != to) {
                    header = convertHeader(header, to);
                }
                AtomicFiles.writeFully(dst, header);
                counts[0] = 1;
                ByteArrayOutputStream pending = new ByteArrayOutputStream();
                Runnable flush = () -> {
                    if (pending.size() == 0) {
                        return;
                    }
                    byte[] pb = pending.toByteArray();
                    byte[] frame = to == Compression.ZSTD ? FrameCodec.encode(pb, 0, pb.length) : pb;
                    try {
                        AtomicFiles.writeFully(dst, frame);
                    } catch (IOException e) {
                        throw new UnavailableException("cannot write " + tmp + ": " + e.getMessage(), e);
                    }
                    lastChecksum[0] = SessionLogWriter.checksum(frame, to);
                    if (to == Compression.ZSTD) {
                        counts[0]++;
                    } else {
                        for (byte x : pb) {
                            if (x == '\n') {
                                counts[0]++;
                            }
                        }
                    }
                    pending.reset();
                };
                o = LogReader.read(in, (buf, off, len, kept, whole) -> {
                    if (whole) {
                        pending.write(buf, off, len);
                        pending.write('\n');
                    } else {
                        for (JsonNode e : kept) {
                            writeLine(pending, e);
                        }
                    }
                    JsonNode last = kept.get(kept.size() - 1);
                    counts[1] += kept.size();
                    counts[2] = Json.safeLong(last.get("seq"));
                    counts[3] = CommitRecord.TYPE.equals(last.path("type").textValue()) ? 1 : 0;
                    time[0] = Json.safeLong(last.get("time"));
                    if (pending.size() >= targetFrameBytes) {
                        flush.run();
                    }
                });
                if (!o.report().accepted()) {
                    throw new CorruptSessionLogException(
                            "log changed while rewriting: " + o.report().error(), -1);
                }
                long closers = 0;
                if (addClosers) {
                    for (ObjectNode c : o.closers()) {
                        writeLine(pending, c);
                        counts[2] = c.get("seq").longValue();
                        closers++;
                    }
                }
                if (protocol && (closers > 0 || counts[3] == 0) && (counts[2] >= 0 || closers > 0)) {
                    long seq = counts[2] + 1;
                    ObjectNode c = Json.MAPPER.createObjectNode();
                    c.put("type", CommitRecord.TYPE).put("seq", seq).put("time", time[0]);
                    c.putObject("data")
                            .put("v", CommitRecord.VERSION)
                            .put("epoch", epoch.value())
                            .put("endSeq", seq);
                    c.put("ignorable", true);
                    writeLine(pending, c);
                    counts[2] = seq;
                    counts[1]++;
                }
                flush.run();
                dst.force(true);
                long size = dst.size();
                if (pre.report().channel() == Channel.P2) {
                    hist.add(new Manifest.EpochStart(epoch, header.length, 0));
                }
                Path backup = null;
                if (inPlace) {
                    backup = in.resolveSibling(in.getFileName() + ".bak-" + System.currentTimeMillis());
                    Files.createLink(backup, in); // keep the original
                }
                CrashPoints.boundary("sessionlog.publish");
                AtomicFiles.publish(
                        tmp, target, inPlace || replaceOut ? AtomicFiles.Mode.REPLACE : AtomicFiles.Mode.CREATE_NEW);
                Path manifestPath = Manifest.pathFor(target);
                if (pre.report().channel() == Channel.P2) {
                    AtomicFiles.replace(
                            manifestPath,
                            ManifestCodec.write(new Manifest(
                                    epoch,
                                    counts[2],
                                    counts[0],
                                    size,
                                    counts[0] == 1 ? SessionLogWriter.checksum(header, to) : lastChecksum[0],
                                    hist)),
                            "sessionlog.replace");
                } else if ((inPlace || replaceOut) && Files.exists(manifestPath)) {
                    Files.move(
                            manifestPath,
                            manifestPath.resolveSibling(
                                    manifestPath.getFileName() + ".bak-" + System.currentTimeMillis()));
                }
                return new Result(pre.report(), target, counts[0], size, counts[1], closers, backup);
            } finally {
                Files.deleteIfExists(tmp);
            }
        } catch (IOException e) {
            throw new UnavailableException("cannot rewrite " + in + ": " + e.getMessage(), e);
        } finally {
            if (lease != null) {
                lease.close();
            }
        }
    }

    /** The header of one encoding in the other: the header frame decoded, or the header line as one frame. */
    private static byte[] convertHeader(byte[] header, Compression to) throws IOException {
        if (to == Compression.ZSTD) {
            return FrameCodec.encode(header, 0, header.length);
        }
        ByteArrayOutputStream line = new ByteArrayOutputStream();
        FrameCodec.decodeComplete(header, line::write, new byte[1 << 12]);
        return line.toByteArray();
    }

    static void writeLine(ByteArrayOutputStream out, JsonNode e) {
        try {
            out.write(Json.MAPPER.writeValueAsBytes(e));
        } catch (IOException x) {
            throw new UnavailableException("cannot serialize event: " + x.getMessage(), x);
        }
        out.write('\n');
    }
}
