package dev.vigilo.exec.record;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.vigilo.common.json.StrictJson;
import dev.vigilo.plan.GateFile;
import dev.vigilo.plan.PlanManifest;
import dev.vigilo.storage.ObjectKey;
import dev.vigilo.storage.ObjectRef;
import dev.vigilo.storage.Sha256;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * The common run snapshot admission writes into every execution database of a run ({@code exec_runs.snapshot},
 * format {@code vigilo.exec.snapshot} version 1, docs/execution.md): the immutable plan references, the storage
 * binding, the dataset identity and the frozen gate policy. Compact JSON in a fixed key order; its SHA-256 is the
 * identity admission compares on replay. Immutable.
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
    private static final ObjectMapper MAPPER = StrictJson.newMapper();

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
        ObjectNode n = JsonNodeFactory.instance.objectNode();
        n.put("format", FORMAT);
        n.put("version", VERSION);
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
            if (!FORMAT.equals(n.path("format").asText()) || n.path("version").asInt() != VERSION) {
                throw new IllegalStateException("not a " + FORMAT + " version " + VERSION + " document");
            }
            List<Gate> gates = new ArrayList<>();
            for (JsonNode g : n.path("gates")) {
                List<String> req = new ArrayList<>();
                g.path("required_evaluators").forEach(x -> req.add(x.asText()));
                gates.add(new Gate(
                        g.path("name").asText(),
                        req,
                        g.path("min_pass_rate").asDouble(),
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
