package dev.vigilo.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.vigilo.control.TestPostgres;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Upload streams: a 2 GiB file uploads and verifies in a real process limited to a 128 MiB heap. The size can be
 * changed with {@code -Dvigilo.it.largeUploadBytes=N} (the default is the requirement).
 */
class LargeUploadIT {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path home;

    @Test
    void aTwoGigabyteFileUploadsWithA128MegabyteHeap() throws Exception {
        long target = Long.getLong("vigilo.it.largeUploadBytes", 2L << 30);
        Path file = home.resolve("large.jsonl");
        long cases = CaseFiles.write(file, target, 900);
        assertThat(Files.size(file)).isGreaterThanOrEqualTo(target);
        List<String> heap = List.of("-Xmx128m", "-XX:+ExitOnOutOfMemoryError");
        String db = TestPostgres.newDatabaseUrl();
        try {
            VigiloProcess.Result up = VigiloProcess.run(
                    home, Map.of(), heap, 1200, "--control-db", db, "dataset", "upload", file.toString(), "--json");
            assertThat(up.exitCode()).as(up.err()).isZero();
            JsonNode entry = JSON.readTree(up.out());
            assertThat(entry.get("case_count").asLong()).isEqualTo(cases);
            assertThat(entry.get("source_bytes").asLong()).isEqualTo(Files.size(file));

            VigiloProcess.Result verify = VigiloProcess.run(
                    home,
                    Map.of(),
                    heap,
                    1200,
                    "--control-db",
                    db,
                    "dataset",
                    "verify",
                    entry.get("upload_id").asText());
            assertThat(verify.exitCode()).as(verify.out() + verify.err()).isZero();
            assertThat(verify.out()).contains("intact: " + cases + " cases");
        } finally {
            Files.deleteIfExists(file);
        }
    }
}
