package dev.vigilo.exec.record;

import dev.vigilo.plan.GateFile;
import dev.vigilo.plan.PlanManifest;
import dev.vigilo.plan.Profile;
import dev.vigilo.stats.Confidence;
import dev.vigilo.storage.ObjectRef;
import dev.vigilo.storage.Sha256;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.UUID;

/**
 * The common run snapshot admission writes into every execution database of a run ({@code exec_runs.snapshot},
 * format {@code vigilo.exec.snapshot}, docs/formats/exec-snapshot.md): the immutable plan references, the storage
 * binding, the dataset identity and the frozen gate policy. Compact JSON in a fixed key order, written and read by
 * {@link RunSnapshotParser}; its SHA-256 is the identity admission compares on replay. Immutable.
 *
 * <p>Versions: 1 holds each gate's threshold; 2 adds each gate's {@code decide} and {@code confidence}; 3 adds the
 * run's {@code epochs} and is written only for a run of several. A run whose
 * gates all decide on the point rate at 0.95 is written as version 1, byte for byte as before, so a replayed
 * admission of a run admitted by an earlier build compares equal; readers accept both.
 *
 * @param runId          the run
 * @param planRoot       the published manifest
 * @param configuration  the frozen configuration file
 * @param storageBinding the physical store of the plan and dataset files
 * @param datasetUploadId the finalized dataset
 * @param cases          planned cases
 * @param chunks         planned chunks
 * @param epochs         executions of every case ({@code epochs.count}, 1..100)
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
        int epochs,
        List<Gate> gates) {

    public RunSnapshot {
        gates = List.copyOf(gates);
        if (epochs < 1 || epochs > 100) {
            throw new IllegalArgumentException("epochs must be in [1, 100], got " + epochs);
        }
    }

    /** One gate's frozen policy: evaluators by name, threshold, decision rule and confidence, planned total. */
    public record Gate(
            String name,
            List<String> requiredEvaluators,
            double minPassRate,
            Profile.Decide decide,
            Confidence confidence,
            long plannedCases) {
        public Gate {
            requiredEvaluators = List.copyOf(requiredEvaluators);
            Objects.requireNonNull(decide, "decide");
            Objects.requireNonNull(confidence, "confidence");
        }

        /** Whether version 1 can say this gate's policy: point decisions, intervals at 0.95. */
        boolean defaultPolicy() {
            return decide == Profile.Decide.POINT && confidence.equals(Confidence.DEFAULT);
        }
    }

    /** The snapshot of a published plan, its gate files and its epochs ({@link EpochReduction.Policy#count}). */
    public static RunSnapshot of(
            UUID runId, ObjectRef root, String storageBinding, PlanManifest m, int epochs, List<GateFile> gates) {
        List<Gate> g = new ArrayList<>();
        for (GateFile gf : gates) {
            g.add(new Gate(
                    gf.gate().name(),
                    gf.gate().requiredEvaluators(),
                    gf.gate().minPassRate(),
                    gf.gate().decide(),
                    Confidence.of(gf.gate().confidence()),
                    gf.selectedCases()));
        }
        return new RunSnapshot(
                runId, root, m.configuration(), storageBinding, m.datasetUploadId(), m.cases(), m.chunks(), epochs, g);
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
