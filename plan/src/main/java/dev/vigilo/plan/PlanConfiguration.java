package dev.vigilo.plan;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.vigilo.dataset.DatasetEntry;
import dev.vigilo.storage.Sha256;
import java.util.UUID;

/**
 * The frozen run configuration, format {@code vigilo.plan.configuration} version 1
 * (docs/formats/plan-configuration.md): the full canonical profile, the agent settings, the evaluator execution
 * plan, the logical dataset identity (never the physical storage binding, so plans are byte-identical across stores)
 * and the executability counts.
 */
final class PlanConfiguration {
    static final String FORMAT = "vigilo.plan.configuration";

    private PlanConfiguration() {}

    static byte[] encode(
            UUID runId,
            Profile profile,
            DatasetEntry dataset,
            long chunks,
            int shardsUsed,
            long[] evaluatorCases,
            long[] gateCases,
            long unselectedCases) {
        ObjectNode n = JsonNodeFactory.instance.objectNode();
        n.put("format", FORMAT);
        n.put("version", PlanLayout.FORMAT_VERSION);
        n.put("run_id", runId.toString());
        n.put("profile_sha256", ProfileJson.sha256(profile).toHex());
        n.set("profile", ProfileJson.tree(profile));
        ObjectNode agent = n.putObject("agent");
        agent.put("kind", profile.agent().kind().wire());
        agent.setAll((ObjectNode) profile.agent().parameters());
        ArrayNode plan = n.putArray("evaluator_plan");
        for (int i = 0; i < profile.evaluators().size(); i++) {
            ObjectNode e = plan.addObject();
            e.put("index", i);
            e.setAll(ProfileJson.evaluator(profile.evaluators().get(i)));
            e.put("applies_to_cases", evaluatorCases[i]);
        }
        ObjectNode d = n.putObject("dataset");
        d.put("upload_id", dataset.uploadId().toString());
        d.put("source_sha256", dataset.sourceSha256().toHex());
        d.put("source_bytes", dataset.sourceBytes());
        d.put("membership_uuid", dataset.membershipUuid().toString());
        d.put("case_count", dataset.caseCount());
        PlanJson.putRef(d.putObject("index_root"), dataset.indexRoot());
        d.put("index_levels", dataset.indexLevels());
        ObjectNode x = n.putObject("executability");
        x.put("cases", dataset.caseCount());
        x.put("chunks", chunks);
        x.put("chunk_cases", PlanShape.CHUNK_CASES);
        x.put("shards", PlanShape.SHARDS);
        x.put("shards_used", shardsUsed);
        x.put("unselected_cases", unselectedCases);
        ArrayNode g = x.putArray("gate_cases");
        for (int i = 0; i < gateCases.length; i++) {
            g.addObject().put("gate", profile.gates().get(i).name()).put("cases", gateCases[i]);
        }
        return PlanJson.encode(n);
    }

    /** Decodes the header and checks that the configuration belongs to this run and profile. */
    static JsonNode decode(byte[] bytes, UUID runId, Sha256 profileSha) {
        JsonNode n = PlanJson.decode(bytes, FORMAT, PlanLayout.FORMAT_VERSION);
        PlanJson.expect(runId.equals(PlanJson.uuid(n, "run_id")), "belongs to another run");
        PlanJson.expect(profileSha.equals(PlanJson.sha(n, "profile_sha256")), "freezes a different profile");
        JsonNode profile = n.get("profile");
        PlanJson.expect(
                profile != null && Sha256.of(ProfileJson.bytes(profile)).equals(profileSha),
                "profile body does not match profile_sha256");
        return n;
    }
}
