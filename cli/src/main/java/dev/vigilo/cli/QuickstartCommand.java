package dev.vigilo.cli;

import dev.vigilo.common.errors.UnavailableException;
import dev.vigilo.dataset.DatasetCatalog;
import dev.vigilo.dataset.DatasetEntry;
import dev.vigilo.dataset.DatasetReader;
import dev.vigilo.dataset.UploadProgress;
import dev.vigilo.dataset.UploadRequest;
import dev.vigilo.dataset.VerifyReport;
import dev.vigilo.plan.CreateRequest;
import dev.vigilo.plan.CreateResult;
import dev.vigilo.plan.ProfileInput;
import dev.vigilo.plan.RunPreparation;
import dev.vigilo.plan.RunStatus;
import dev.vigilo.plan.RunStatusReader;
import dev.vigilo.storage.ObjectStore;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * {@code vigilo quickstart}: the main job on the embedded defaults. Today it uploads the bundled example dataset,
 * verifies it, prepares a run plan from the bundled example profile (held with --prepare-only until workers
 * exist) and prints what it stored. Re-running it is idempotent (upload and run ids derive from the content).
 */
@Command(
        name = "quickstart",
        mixinStandardHelpOptions = true,
        description = {
            "Upload the bundled example dataset into the default store, verify it, prepare a run plan with "
                    + "the bundled example profile, and show what was stored.",
            "Needs nothing but Java: the control database defaults to an embedded PostgreSQL under VIGILO_HOME."
        })
final class QuickstartCommand implements Callable<Integer> {
    static final String EXAMPLE = "examples/quickstart.jsonl";
    static final String PROFILE = "examples/quickstart-profile.yaml";

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
            out.println("control database:  " + connections.control().description());
            ObjectStore store = connections.openStore(Optional.empty());
            out.println("object store:      " + store.binding());
            UUID uploadId = UUID.nameUUIDFromBytes(
                    ("vigilo-quickstart:" + sha256Hex(example)).getBytes(StandardCharsets.UTF_8));
            DatasetEntry entry = catalog.upload(
                    new UploadRequest(example, Optional.of("quickstart-example"), Optional.of(uploadId)),
                    store,
                    UploadProgress.NONE);
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

            String profile = readResource(PROFILE);
            UUID runId = UUID.nameUUIDFromBytes(("vigilo-quickstart-run:" + entry.uploadId() + ":"
                            + dev.vigilo.storage.Sha256.of(profile.getBytes(StandardCharsets.UTF_8))
                                    .toHex())
                    .getBytes(StandardCharsets.UTF_8));
            CreateResult run = Interruptible.run(
                    () -> new RunPreparation(connections.control().jdbi(), connections.storage())
                            .create(new CreateRequest(
                                    ProfileInput.inline(profile), entry.uploadId(), Optional.of(runId), true)));
            RunStatus status = new RunStatusReader(connections.control().jdbi()).status(runId);
            out.println();
            out.println("Prepared a run plan with the example profile (" + PROFILE + "), held by --prepare-only:");
            out.println("  run id:          " + run.runId());
            out.println("  status:          " + run.status().spelling() + ", plan "
                    + run.planStatus().spelling() + ", " + run.expectedChunks() + " chunk(s), " + run.cases()
                    + " cases");
            java.util.Map<String, Long> gates = new java.util.LinkedHashMap<>();
            status.shards().forEach(sh -> sh.gates().forEach((g, n) -> gates.merge(g, n, Long::sum)));
            out.println("  planned cases:   " + gates);
            out.println("  plan manifest:   " + run.root().key());
            out.println();
            out.println("Next: `./vigilo run status " + run.runId() + "`, `./vigilo dataset show " + entry.uploadId()
                    + "`, or `./vigilo dataset upload YOUR.jsonl`.");
            out.println("Dashboard: `./vigilo serve`, then open http://127.0.0.1:7070/runs/" + run.runId());
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
            throw new UnavailableException(
                    "cannot extract the example dataset to a temporary file: " + e.getMessage(), e);
        }
    }

    private static String readResource(String name) {
        try (InputStream in = QuickstartCommand.class.getClassLoader().getResourceAsStream(name)) {
            if (in == null) {
                throw new IllegalStateException("the bundled " + name + " is missing from this build");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UnavailableException("cannot read the bundled " + name + ": " + e.getMessage(), e);
        }
    }

    private static String sha256Hex(Path file) {
        try {
            return dev.vigilo.storage.Sha256.of(Files.readAllBytes(file)).toHex();
        } catch (IOException e) {
            throw new UnavailableException("cannot read " + file + ": " + e.getMessage(), e);
        }
    }
}
