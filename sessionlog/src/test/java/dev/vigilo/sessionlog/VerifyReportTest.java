package dev.vigilo.sessionlog;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import dev.vigilo.common.errors.InvalidInputException;
import dev.vigilo.common.errors.NotFoundException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The `session verify --json` contract: keys, types, nulls, and clear errors for bad input. */
class VerifyReportTest {
    @TempDir
    Path dir;

    static final List<String> KEYS = List.of(
            "verdict",
            "events",
            "stored",
            "closers",
            "channel",
            "compression",
            "hw_seq",
            "hw_offset",
            "fenced",
            "truncated",
            "torn_offset",
            "manifest",
            "max_epoch",
            "frames",
            "error",
            "error_offset");

    @Test
    void acceptedJsonHasEveryKeyAndNullErrors() throws Exception {
        Path f = dir.resolve("a.jsonl.zstd");
        Files.write(f, Corpus.shapes().get("open-turn-closers"));
        JsonNode n = Json.MAPPER.readTree(SessionVerifier.verify(f).toJson());
        List<String> keys = new ArrayList<>();
        n.fieldNames().forEachRemaining(keys::add);
        assertThat(keys).containsExactlyElementsOf(KEYS);
        assertThat(n.get("verdict").asText()).isEqualTo("ACCEPT");
        assertThat(n.get("events").asLong())
                .isEqualTo(n.get("stored").asLong() + n.get("closers").asLong());
        assertThat(n.get("channel").asText()).isEqualTo("none");
        assertThat(n.get("error").isNull()).isTrue();
        assertThat(n.get("error_offset").isNull()).isTrue();
        assertThat(n.get("hw_offset").asLong()).isEqualTo(Files.size(f));
    }

    @Test
    void rejectedJsonNamesWhatAndWhere() throws Exception {
        Path f = dir.resolve("r.jsonl.zstd");
        Files.write(f, Corpus.shapes().get("checksum-mismatch-middle"));
        VerifyReport r = SessionVerifier.verify(f);
        JsonNode n = Json.MAPPER.readTree(r.toJson());
        assertThat(n.get("verdict").asText()).isEqualTo("REJECT");
        assertThat(n.get("events").asLong()).isZero();
        assertThat(n.get("error").asText()).contains("failed validation");
        List<long[]> frames = Corpus.frameBounds(Files.readAllBytes(f));
        assertThat(n.get("error_offset").asLong()).isEqualTo(frames.get(2)[0]);
        assertThat(r.toText()).startsWith("REJECT events=0 error=");
    }

    @Test
    void protocolRejectsReportTheirChannel() throws Exception {
        Path f = new ProtocolLogs().p1(0, 9, 0).p1(10, 12, 0).p1(10, 19, 0).write(dir, "v", null);
        VerifyReport r = SessionVerifier.verify(f);
        assertThat(r.channel()).isEqualTo(Channel.P1);
        assertThat(r.accepted()).isFalse();
    }

    @Test
    void aMissingFileIsAnIoErrorNotAVerdict() {
        assertThatThrownBy(() -> SessionVerifier.verify(dir.resolve("missing.jsonl.zstd")))
                .isInstanceOf(NotFoundException.class)
                .hasMessageContaining("missing.jsonl.zstd");
    }

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void aPipeOrADeviceIsNamedForWhatItIsAndNeverOpened() throws Exception {
        Path fifo = dir.resolve("session.jsonl.zstd");
        assertThat(new ProcessBuilder("mkfifo", fifo.toString()).start().waitFor())
                .isZero();
        // Opening the pipe would block until a writer came; the check before it reads only metadata.
        assertThatThrownBy(() -> SessionVerifier.verify(fifo))
                .isInstanceOf(InvalidInputException.class)
                .hasMessage(fifo + " is a named pipe (FIFO), not a regular file; give the session log file"
                        + " (session.jsonl.zstd or session.jsonl)");
        assertThatThrownBy(() -> SessionCat.cat(fifo, 0, OutputStream.nullOutputStream()))
                .isInstanceOf(InvalidInputException.class);
        assertThatThrownBy(() -> SessionVerifier.verify(Path.of("/dev/null")))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageStartingWith("/dev/null is a character device (such as /dev/null), not a regular file");
    }

    @Test
    void newerManifestVersionsAreRefusedAsUnsupported() throws Exception {
        Path f = new ProtocolLogs().plain(0, 4, 0L).write(dir, "m", null);
        Files.writeString(Manifest.pathFor(f), "{\"format\":\"vigilo-session-manifest\",\"version\":2}");
        VerifyReport r = SessionVerifier.verify(f);
        assertThat(r.accepted()).isFalse();
        assertThat(r.error()).contains("SessionFormatUnsupportedError").contains("version 2");
    }
}
