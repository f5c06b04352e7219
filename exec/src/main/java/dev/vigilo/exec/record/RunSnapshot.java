package dev.vigilo.exec.record;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.vigilo.common.json.StrictJson;
import dev.vigilo.plan.GateFile;
import dev.vigilo.plan.PlanManifest;
import dev.vigilo.plan.Profile;
import dev.vigilo.stats.Confidence;
import dev.vigilo.storage.ObjectKey;
import dev.vigilo.storage.ObjectRef;
import dev.vigilo.storage.Sha256;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.UUID;

/**
 * The common run snapshot admission writes into every execution database of a run ({@code exec_runs.snapshot},
 * format {@code vigilo.exec.snapshot}, docs/execution.md): the immutable plan references, the storage binding, the
 * dataset identity and the frozen gate policy. Compact JSON in a fixed key order; its SHA-256 is the identity
 * admission compares on replay. Immutable.
 *
 * <p>Versions: 1 holds each gate's threshold; 2 adds each gate's {@code decide} and {@code confidence}. A run whose
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
    static final String FORMAT = "vigilo.exec.snapshot";
    static final int VERSION = 1;
    static final int VERSION_DECIDE = 2;
    private static final ObjectMapper MAPPER = StrictJson.newMapper();

    public RunSnapshot {
        gates = List.copyOf(gates);
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

    public static RunSnapshot of(
            UUID runId, ObjectRef root, String storageBinding, PlanManifest m, List<GateFile> gates) {
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
                runId, root, m.configuration(), storageBinding, m.datasetUploadId(), m.cases(), m.chunks(), g);
    }

    byte[] encode() {
        ObjectNode n = JsonNodeFactory.instance.objectNode();
        n.put("format", FORMAT);
        boolean decides = !gates.stream().allMatch(Gate::defaultPolicy);
        n.put("version", decides ? VERSION_DECIDE : VERSION);
        n.put("run_id", runId.toString());
        putRef(n.putObject("plan_root"), planRoot);
        putRef(n.putObject("configuration"), configuration);
        n.put("storage_binding", storageBinding);
        n.put("dataset_upload_id", datasetUploadId.toString());
        n.put("cases", cases);
        n.put("chunks", chunks);
        ArrayNode a = n.putArray("gates");
        for (Gate gate : gates) {
            ObjectNode o = a.addObject();
            o.put("name", gate.name());
            ArrayNode r = o.putArray("required_evaluators");
            gate.requiredEvaluators().forEach(r::add);
            o.put("min_pass_rate", gate.minPassRate());
            if (decides) {
                o.put("decide", gate.decide().wire());
                o.put("confidence", gate.confidence().level());
            }
            o.put("planned_cases", gate.plannedCases());
        }
        try {
            return MAPPER.writeValueAsBytes(n);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public Sha256 sha256() {
        return Sha256.of(encode());
    }

    String text() {
        return new String(encode(), StandardCharsets.UTF_8);
    }

    /** Decodes a snapshot this build wrote; anything else is a damaged execution record. */
    public static RunSnapshot decode(String text) {
        try {
            JsonNode n = MAPPER.readTree(text);
            int version = n.path("version").asInt();
            if (!FORMAT.equals(n.path("format").asText()) || (version != VERSION && version != VERSION_DECIDE)) {
                throw new IllegalStateException("not a " + FORMAT + " version 1 or 2 document");
            }
            List<Gate> gates = new ArrayList<>();
            for (JsonNode g : n.path("gates")) {
                List<String> req = new ArrayList<>();
                g.path("required_evaluators").forEach(x -> req.add(x.asText()));
                Profile.Decide decide = Profile.Decide.POINT;
                Confidence confidence = Confidence.DEFAULT;
                if (version == VERSION_DECIDE) {
                    decide = Profile.Decide.fromWire(g.path("decide").asText())
                            .orElseThrow(() -> new IllegalStateException("a gate's decide is not point or bound"));
                    confidence = Confidence.of(g.path("confidence").asDouble());
                }
                gates.add(new Gate(
                        g.path("name").asText(),
                        req,
                        g.path("min_pass_rate").asDouble(),
                        decide,
                        confidence,
                        g.path("planned_cases").asLong()));
            }
            return new RunSnapshot(
                    UUID.fromString(n.path("run_id").asText()),
                    ref(n.path("plan_root")),
                    ref(n.path("configuration")),
                    n.path("storage_binding").asText(),
                    UUID.fromString(n.path("dataset_upload_id").asText()),
                    n.path("cases").asLong(),
                    n.path("chunks").asLong(),
                    gates);
        } catch (IOException | RuntimeException e) {
            throw new dev.vigilo.common.errors.DamagedException(
                    "the execution database's run snapshot cannot be read (" + e.getMessage() + ")", e);
        }
    }

    private static void putRef(ObjectNode o, ObjectRef ref) {
        o.put("key", ref.key().value());
        o.put("length", ref.length());
        o.put("sha256", ref.sha256().toHex());
    }

    private static ObjectRef ref(JsonNode n) {
        return new ObjectRef(
                ObjectKey.of(n.path("key").asText()),
                n.path("length").asLong(),
                Sha256.parseHex(n.path("sha256").asText()));
    }
}
