package dev.vigilo.exec.record;

import dev.vigilo.plan.GateFile;
import dev.vigilo.plan.PlanManifest;
import dev.vigilo.storage.ObjectRef;
import dev.vigilo.storage.Sha256;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * The common run snapshot admission writes into every execution database of a run ({@code exec_runs.snapshot},
 * format {@code vigilo.exec.snapshot}, docs/formats/exec-snapshot.md): the immutable plan references, the storage
 * binding, the dataset identity and the frozen gate policy. Compact JSON in a fixed key order, written and read by
 * {@link RunSnapshotParser}; its SHA-256 is the identity admission compares on replay. Immutable.
 *
 * @param runId          the run
 * @param planRoot       the published manifest
 * @param configuration  the frozen configuration file
 * @param storageBinding the physical store of the plan and dataset files
 * @param datasetUploadId the finalized dataset
 * @param cases          planned cases
 * @param chunks         planned chunks
 * @param gates          the gate policy, in gate order
 */
public record RunSnapshot(
        UUID runId,
        ObjectRef planRoot,
        ObjectRef configuration,
        String storageBinding,
        UUID datasetUploadId,
        long cases,
        long chunks,
        List<Gate> gates) {

    public RunSnapshot {
        gates = List.copyOf(gates);
    }

    /** One gate's frozen policy: evaluators by name, threshold and planned total. */
    public record Gate(String name, List<String> requiredEvaluators, double minPassRate, long plannedCases) {
        public Gate {
            requiredEvaluators = List.copyOf(requiredEvaluators);
        }
    }

    public static RunSnapshot of(
            UUID runId, ObjectRef root, String storageBinding, PlanManifest m, List<GateFile> gates) {
        List<Gate> g = new ArrayList<>();
        for (GateFile gf : gates) {
            g.add(new Gate(
                    gf.gate().name(), gf.gate().requiredEvaluators(), gf.gate().minPassRate(), gf.selectedCases()));
        }
        return new RunSnapshot(
                runId, root, m.configuration(), storageBinding, m.datasetUploadId(), m.cases(), m.chunks(), g);
    }

    byte[] encode() {
        return RunSnapshotParser.toJson(this);
    }

    public Sha256 sha256() {
        return Sha256.of(encode());
    }

    String text() {
        return new String(encode(), StandardCharsets.UTF_8);
    }
}
