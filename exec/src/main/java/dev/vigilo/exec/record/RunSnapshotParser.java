package dev.vigilo.exec.record;

import static dev.vigilo.exec.record.JsonFields.array;
import static dev.vigilo.exec.record.JsonFields.doubleValue;
import static dev.vigilo.exec.record.JsonFields.longValue;
import static dev.vigilo.exec.record.JsonFields.object;
import static dev.vigilo.exec.record.JsonFields.putRef;
import static dev.vigilo.exec.record.JsonFields.strings;
import static dev.vigilo.exec.record.JsonFields.text;
import static dev.vigilo.exec.record.JsonFields.uuid;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.vigilo.common.errors.DamagedException;
import dev.vigilo.common.json.StrictJson;
import dev.vigilo.plan.Profile;
import dev.vigilo.stats.Confidence;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;

/**
 * The one writer and reader of format {@code vigilo.exec.snapshot} (the run snapshot in {@code exec_runs.snapshot},
 * docs/formats/exec-snapshot.md): the evidence settlement, the worker and {@code vigilo verify} read of a run's frozen
 * plan and gate policy. As {@link ReceiptParser}: field names are the constants below, {@link #toJson} writes the
 * current version, {@link #fromJson} reads every version in {@link Version} strictly ({@link StrictJson}, every field
 * required with its type) and refuses a version it does not know as damage.
 */
public final class RunSnapshotParser {
    private RunSnapshotParser() {}

    static final String FORMAT = "vigilo.exec.snapshot";

    /**
     * The versions this build reads, oldest first. {@link #toJson} writes the oldest that can say the snapshot: a
     * run whose gates all decide on the point rate at 0.95 is {@link #V1}, byte for byte as before {@link #V2}
     * existed (a replayed admission of an older run compares equal); a run of one epoch otherwise is {@link #V2}; a
     * run of several epochs is {@link #V3}.
     */
    enum Version {
        /** Each gate's threshold and planned count. */
        V1(1),
        /** Adds each gate's {@code decide} and {@code confidence}. */
        V2(2),
        /** Version 2 plus {@code epochs}, the executions of every case (at least 2). */
        V3(3);

        final int number;

        Version(int number) {
            this.number = number;
        }
    }

    static final String RUN_ID = "run_id";
    static final String PLAN_ROOT = "plan_root";
    static final String CONFIGURATION = "configuration";
    static final String STORAGE_BINDING = "storage_binding";
    static final String DATASET_UPLOAD_ID = "dataset_upload_id";
    static final String CASES = "cases";
    static final String CHUNKS = "chunks";
    static final String EPOCHS = "epochs";
    static final String GATES = "gates";
    static final String NAME = "name";
    static final String REQUIRED_EVALUATORS = "required_evaluators";
    static final String MIN_PASS_RATE = "min_pass_rate";
    static final String PLANNED_CASES = "planned_cases";
    static final String DECIDE = "decide";
    static final String CONFIDENCE = "confidence";

    private static final ObjectMapper MAPPER = StrictJson.newMapper();

    /** The snapshot in its version: compact JSON in a fixed key order (its SHA-256 is its identity). */
    public static byte[] toJson(RunSnapshot s) {
        Version version = s.epochs() > 1
                ? Version.V3
                : s.gates().stream().allMatch(RunSnapshot.Gate::defaultPolicy) ? Version.V1 : Version.V2;
        boolean decides = version != Version.V1;
        ObjectNode n = JsonFields.document(FORMAT, version.number);
        n.put(RUN_ID, s.runId().toString());
        putRef(n.putObject(PLAN_ROOT), s.planRoot());
        putRef(n.putObject(CONFIGURATION), s.configuration());
        n.put(STORAGE_BINDING, s.storageBinding());
        n.put(DATASET_UPLOAD_ID, s.datasetUploadId().toString());
        n.put(CASES, s.cases());
        n.put(CHUNKS, s.chunks());
        if (version == Version.V3) {
            n.put(EPOCHS, s.epochs());
        }
        ArrayNode a = n.putArray(GATES);
        for (RunSnapshot.Gate gate : s.gates()) {
            ObjectNode o = a.addObject();
            o.put(NAME, gate.name());
            ArrayNode r = o.putArray(REQUIRED_EVALUATORS);
            gate.requiredEvaluators().forEach(r::add);
            o.put(MIN_PASS_RATE, gate.minPassRate());
            if (decides) {
                o.put(DECIDE, gate.decide().wire());
                o.put(CONFIDENCE, gate.confidence().level());
            }
            o.put(PLANNED_CASES, gate.plannedCases());
        }
        try {
            return MAPPER.writeValueAsBytes(n);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Reads a snapshot of any version in {@link Version}.
     *
     * @throws DamagedException on any format problem, and on a version this build does not read
     */
    public static RunSnapshot fromJson(String text) {
        try {
            JsonNode n = MAPPER.readTree(text);
            Version version = JsonFields.header(n, FORMAT, Version.values(), v -> v.number);
            List<RunSnapshot.Gate> gates = new ArrayList<>();
            for (JsonNode g : array(n, GATES, "")) {
                String in = "gate " + g.path(NAME);
                Profile.Decide decide = Profile.Decide.POINT;
                Confidence confidence = Confidence.DEFAULT;
                if (version != Version.V1) {
                    String rule = text(g, DECIDE, in);
                    decide = Profile.Decide.fromWire(rule)
                            .orElseThrow(
                                    () -> new DamagedException(in + ": decide \"" + rule + "\" is not point or bound"));
                    confidence = Confidence.of(doubleValue(g, CONFIDENCE, in));
                }
                gates.add(new RunSnapshot.Gate(
                        text(g, NAME, in),
                        strings(g, REQUIRED_EVALUATORS, in),
                        doubleValue(g, MIN_PASS_RATE, in),
                        decide,
                        confidence,
                        longValue(g, PLANNED_CASES, in)));
            }
            return new RunSnapshot(
                    uuid(n, RUN_ID, ""),
                    JsonFields.ref(object(n, PLAN_ROOT, ""), PLAN_ROOT),
                    JsonFields.ref(object(n, CONFIGURATION, ""), CONFIGURATION),
                    text(n, STORAGE_BINDING, ""),
                    uuid(n, DATASET_UPLOAD_ID, ""),
                    longValue(n, CASES, ""),
                    longValue(n, CHUNKS, ""),
                    version == Version.V3 ? epochs(n) : 1,
                    gates);
        } catch (IOException | RuntimeException e) {
            throw new DamagedException(
                    "the execution database's run snapshot cannot be read (" + e.getMessage() + ")", e);
        }
    }

    private static int epochs(JsonNode n) {
        long epochs = longValue(n, EPOCHS, "");
        if (epochs < 2 || epochs > 100) {
            throw new DamagedException("a version 3 snapshot has " + epochs + " epochs, not 2..100");
        }
        return (int) epochs;
    }
}
