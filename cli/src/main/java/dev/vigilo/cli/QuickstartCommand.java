package dev.vigilo.cli;

import dev.vigilo.dataset.DatasetCatalog;
import dev.vigilo.dataset.DatasetEntry;
import dev.vigilo.dataset.DatasetReader;
import dev.vigilo.dataset.UploadProgress;
import dev.vigilo.dataset.UploadRequest;
import dev.vigilo.dataset.VerifyReport;
import dev.vigilo.storage.ObjectStore;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.Callable;

/**
 * {@code vigilo quickstart}: the main job on the embedded defaults. Today it uploads the bundled example dataset,
 * verifies it and prints what it stored. Re-running it is idempotent (the upload id derives from the content).
 */
@Command(name = "quickstart", mixinStandardHelpOptions = true,
        description = {"Upload the bundled example dataset into the default store, verify it and show what was stored.",
                "Needs nothing but Java: the control database defaults to an embedded PostgreSQL under VIGILO_HOME."})
final class QuickstartCommand implements Callable<Integer> {
    static final String EXAMPLE = "examples/quickstart.jsonl";

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        PrintWriter out = CommandSupport.out(spec);
        VigiloCommand root = CommandSupport.root(spec);
        Path example = extractExample();
        try (Connections connections = root.connections()) {
            out.println("Vigilo home:       " + root.environment().vigiloHome());
            DatasetCatalog catalog = new DatasetCatalog(connections.control().jdbi());
            out.println("control database: " + connections.control().description());
            ObjectStore store = connections.openStore(Optional.empty());
            out.println("object store:      " + store.binding());
            UUID uploadId = UUID.nameUUIDFromBytes(("vigilo-quickstart:" + sha256Hex(example))
                    .getBytes(StandardCharsets.UTF_8));
            DatasetEntry entry = catalog.upload(new UploadRequest(example, Optional.of("quickstart-example"),
                    Optional.of(uploadId)), store, UploadProgress.NONE);
            VerifyReport report = DatasetReader.open(entry, store).verify();
            out.println();
            out.println("Uploaded the example dataset (" + EXAMPLE + "):");
            out.println("  upload id:       " + entry.uploadId());
            out.println("  cases:           " + entry.caseCount());
            out.println("  source hash:     " + entry.sourceSha256());
            out.println("  membership uuid: " + entry.membershipUuid());
            out.println("  index root:      " + entry.indexRoot().key());
            out.println("  verified:        " + report.caseCount() + " cases, " + report.caseFiles() + " case file(s), "
                    + report.indexDocuments() + " index document(s), " + report.bytesRead() + " bytes");
            out.println();
            out.println("Next: `./vigilo dataset show " + entry.uploadId() + "` or `./vigilo dataset upload YOUR.jsonl`.");
        } finally {
            try {
                Files.deleteIfExists(example);
            } catch (IOException e) {
                // a temporary copy; nothing depends on its removal
            }
        }
        return ExitCode.OK;
    }

    private static Path extractExample() {
        try (InputStream in = QuickstartCommand.class.getClassLoader().getResourceAsStream(EXAMPLE)) {
            if (in == null) {
                throw new IllegalStateException("the bundled example " + EXAMPLE + " is missing from this build");
            }
            Path tmp = Files.createTempFile("vigilo-quickstart-", ".jsonl");
            Files.write(tmp, in.readAllBytes());
            return tmp;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot extract the example dataset", e);
        }
    }

    private static String sha256Hex(Path file) {
        try {
            return dev.vigilo.storage.Sha256.of(Files.readAllBytes(file)).toHex();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
