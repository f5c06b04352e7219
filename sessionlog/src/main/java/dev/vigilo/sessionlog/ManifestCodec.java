package dev.vigilo.sessionlog;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** Parses and writes the {@link Manifest} JSON; rejects other formats and newer versions, checks fields. */
final class ManifestCodec {
    static final String F_FORMAT = "format",
            F_VERSION = "version",
            F_EPOCH = "epoch",
            F_END_SEQ = "endSeq",
            F_FRAMES = "frames",
            F_COMMITTED = "committedBytes",
            F_CHECKSUM = "lastFrameChecksum",
            F_EPOCHS = "epochs",
            F_START_OFFSET = "startOffset",
            F_START_SEQ = "startSeq";

    private ManifestCodec() {}

    static byte[] write(Manifest m) {
        ObjectNode n = Json.MAPPER.createObjectNode();
        n.put(F_FORMAT, Manifest.FORMAT)
                .put(F_VERSION, Manifest.VERSION)
                .put(F_EPOCH, m.epoch().value())
                .put(F_END_SEQ, m.endSeq())
                .put(F_FRAMES, m.frames())
                .put(F_COMMITTED, m.committedBytes());
        if (m.lastFrameChecksum() < 0) {
            n.putNull(F_CHECKSUM);
        } else {
            n.put(F_CHECKSUM, String.format("%08x", m.lastFrameChecksum()));
        }
        var arr = n.putArray(F_EPOCHS);
        for (Manifest.EpochStart s : m.epochs()) {
            arr.addObject()
                    .put(F_EPOCH, s.epoch().value())
                    .put(F_START_OFFSET, s.startOffset())
                    .put(F_START_SEQ, s.startSeq());
        }
        return (n + "\n").getBytes(StandardCharsets.UTF_8);
    }

    /**
     * @return the manifest beside {@code log}, or null when there is none
     * @throws CorruptSessionLogException when it exists but is not a valid version-1 manifest
     * @throws UnsupportedSessionFormatException when its version is newer
     */
    static Manifest read(Path log) throws IOException {
        Path p = Manifest.pathFor(log);
        byte[] b;
        try {
            b = Files.readAllBytes(p);
        } catch (NoSuchFileException e) {
            return null;
        }
        JsonNode n = Json.parseLine(b, 0, b.length);
        if (n == null
                || !n.isObject()
                || !Manifest.FORMAT.equals(n.path(F_FORMAT).textValue())) {
            throw new CorruptSessionLogException(
                    "manifest " + p + " is not a " + Manifest.FORMAT
                            + " JSON object; delete it to fall back to the frame scan",
                    -1);
        }
        if (!n.path(F_VERSION).canConvertToInt() || n.path(F_VERSION).intValue() != Manifest.VERSION) {
            if (n.path(F_VERSION).isIntegralNumber() && n.path(F_VERSION).longValue() > Manifest.VERSION) {
                throw new UnsupportedSessionFormatException(
                        "manifest " + p + " has version " + n.get(F_VERSION) + "; this build reads version "
                                + Manifest.VERSION,
                        -1);
            }
            throw new CorruptSessionLogException("manifest " + p + " has an invalid version " + n.get(F_VERSION), -1);
        }
        try {
            List<Manifest.EpochStart> hist = new ArrayList<>();
            for (JsonNode s : required(n, F_EPOCHS, p)) {
                hist.add(new Manifest.EpochStart(
                        new Epoch(longField(s, F_EPOCH, p)),
                        longField(s, F_START_OFFSET, p),
                        longField(s, F_START_SEQ, p)));
            }
            JsonNode cs = required(n, F_CHECKSUM, p);
            long checksum = cs.isNull() ? -1 : Long.parseLong(cs.textValue(), 16);
            return new Manifest(
                    new Epoch(longField(n, F_EPOCH, p)),
                    longField(n, F_END_SEQ, p),
                    longField(n, F_FRAMES, p),
                    longField(n, F_COMMITTED, p),
                    checksum,
                    hist);
        } catch (IllegalArgumentException | NullPointerException e) {
            throw new CorruptSessionLogException("manifest " + p + " has an invalid field: " + e.getMessage(), -1);
        }
    }

    private static JsonNode required(JsonNode n, String f, Path p) {
        JsonNode v = n.get(f);
        if (v == null) {
            throw new CorruptSessionLogException("manifest " + p + " lacks required field " + f, -1);
        }
        return v;
    }

    private static long longField(JsonNode n, String f, Path p) {
        JsonNode v = required(n, f, p);
        if (!v.isIntegralNumber() || !v.canConvertToLong()) {
            throw new CorruptSessionLogException("manifest " + p + " field " + f + " must be an integer", -1);
        }
        return v.longValue();
    }
}
