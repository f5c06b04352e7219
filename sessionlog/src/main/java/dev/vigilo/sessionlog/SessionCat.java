package dev.vigilo.sessionlog;

import com.fasterxml.jackson.databind.JsonNode;
import dev.vigilo.common.errors.UnavailableException;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.Objects;

/**
 * {@code vigilo session cat}: streams the committed stored events (packed rows expanded, P1 commit records
 * omitted, closers not included) as JSONL, one event per line, from {@code fromSeq} on. Rows stored as a single
 * event are copied byte for byte; expanded members are serialized by Jackson.
 */
public final class SessionCat {
    /**
     * @param report  the verdict of the read
     * @param written events written
     */
    public record CatReport(VerifyReport report, long written) {}

    private SessionCat() {}

    /**
     * @param log     the log
     * @param fromSeq first seq to print (>= 0)
     * @param out     receives the JSONL (not closed)
     * @return the verdict and the number of events written; on REJECT the output stops where the problem was found
     * @throws UnavailableException when the log or {@code out} fails
     */
    public static CatReport cat(Path log, long fromSeq, OutputStream out) {
        Objects.requireNonNull(log, "log");
        Objects.requireNonNull(out, "out");
        if (fromSeq < 0) {
            throw new IllegalArgumentException("fromSeq must be >= 0, got " + fromSeq);
        }
        long[] n = {0};
        try {
            LogReader.Outcome o = LogReader.read(log, (buf, off, len, kept, whole) -> {
                try {
                    if (whole && kept.size() == 1) {
                        JsonNode e = kept.get(0);
                        if (skip(e, fromSeq)) {
                            return;
                        }
                        int l = len;
                        if (l > 0 && buf[off + l - 1] == '\r') {
                            l--;
                        }
                        out.write(buf, off, l);
                        out.write('\n');
                        n[0]++;
                    } else {
                        for (JsonNode e : kept) {
                            if (skip(e, fromSeq)) {
                                continue;
                            }
                            out.write(Json.MAPPER.writeValueAsBytes(e));
                            out.write('\n');
                            n[0]++;
                        }
                    }
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
            out.flush();
            return new CatReport(o.report(), n[0]);
        } catch (UncheckedIOException e) {
            throw new UnavailableException(
                    "cannot write events: " + e.getCause().getMessage(), e.getCause());
        } catch (IOException e) {
            throw new UnavailableException("cannot write events: " + e.getMessage(), e);
        }
    }

    private static boolean skip(JsonNode e, long fromSeq) {
        return Json.safeLong(e.get("seq")) < fromSeq
                || CommitRecord.TYPE.equals(e.path("type").textValue());
    }
}
