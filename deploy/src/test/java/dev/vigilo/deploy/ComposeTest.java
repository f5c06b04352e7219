package dev.vigilo.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.vigilo.config.CompiledSchema;
import java.io.InputStream;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * deploy/compose.yaml checked against the Compose Specification's JSON Schema (compose-spec/compose-spec,
 * schema/compose-spec.json at a08f8d5, vendored as a test resource: tests fetch nothing), after the YAML merge keys
 * are resolved as compose resolves them; and what the walk-through in docs/deployment.md relies on. `compose up`
 * itself runs in {@link ComposeIT}; {@link #theLocalOverrideChangesOnlyTheThirdPartyImages} checks the override it uses.
 */
class ComposeTest {
    private static CompiledSchema schema;
    private static JsonNode compose;

    @BeforeAll
    static void read() throws Exception {
        try (InputStream in = ComposeTest.class.getResourceAsStream("compose-spec.json")) {
            ObjectNode spec = (ObjectNode) new ObjectMapper().readTree(in);
            // The file names draft-07 by its https URL and itself by a relative $id; the validator knows the
            // meta-schema by its canonical id and wants an absolute $id (its references are all local: nothing is
            // fetched).
            spec.put("$schema", "http://json-schema.org/draft-07/schema#");
            spec.put("$id", "https://github.com/compose-spec/compose-spec/schema/compose-spec.json");
            schema = CompiledSchema.compile(spec);
        }
        compose = Manifests.documents(Manifests.repository().resolve("deploy/compose.yaml"))
                .get(0);
    }

    @Test
    void composeFileSatisfiesTheComposeSpecification() {
        assertThat(schema.violations(compose)).isEmpty();
    }

    @Test
    void theSchemaRefusesWhatComposeRefuses() {
        ObjectNode unknownKey = compose.deepCopy();
        ((ObjectNode) unknownKey.at("/services/worker")).put("replica", 3);
        assertThat(schema.violations(unknownKey))
                .hasValueSatisfying(v -> assertThat(v).contains("replica"));
        ObjectNode wrongType = compose.deepCopy();
        ((ObjectNode) wrongType.at("/services/worker")).put("ports", "9400");
        assertThat(schema.violations(wrongType)).isPresent();
    }

    @Test
    void servicesWorkersAndTheirConfigurationAreWhatTheWalkThroughNeeds() {
        JsonNode services = compose.get("services");
        List<String> names = new ArrayList<>();
        services.fieldNames().forEachRemaining(names::add);
        assertThat(names).contains("postgres", "s3", "worker", "serve", "cli");
        JsonNode worker = services.get("worker");
        assertThat(worker.at("/command/0").asText()).isEqualTo("worker");
        assertThat(worker.at("/deploy/replicas").asInt()).isGreaterThan(1);
        // The give-back takes up to 40 s (cli SignalStop.GRACE); compose's default before SIGKILL is 10 s.
        assertThat(worker.get("stop_grace_period").asText()).isEqualTo("60s");
        assertThat(worker.at("/environment/VIGILO_CONTROL_DB").asText())
                .startsWith("jdbc:postgresql://postgres:5432/")
                .contains("${VIGILO_DB_PASSWORD");
        assertThat(services.at("/serve/environment/VIGILO_SERVE_TOKEN").asText())
                .startsWith("${");
        // storage.toml is read from the read-only bind mount of deploy/compose (podman-compose 1.0 does not mount
        // compose `configs`).
        assertThat(worker.at("/environment/VIGILO_STORAGE_CONFIG").asText()).isEqualTo("/compose/storage.toml");
        List<String> mounts = new ArrayList<>();
        worker.get("volumes").forEach(v -> mounts.add(v.asText()));
        assertThat(mounts).contains("./compose:/compose:ro");
        assertThat(Manifests.repository().resolve("deploy/compose/storage.toml"))
                .isRegularFile();
        assertThat(Manifests.repository().resolve("deploy/compose/quickstart-profile.yaml"))
                .isRegularFile();
    }

    @Test
    void noCredentialIsWrittenInTheComposeFiles() throws Exception {
        List<String> checked = new ArrayList<>();
        compose.get("services")
                .properties()
                .iterator()
                .forEachRemaining(service -> service.getValue()
                        .path("environment")
                        .properties()
                        .iterator()
                        .forEachRemaining(e -> {
                            if (e.getKey().matches("(?i).*(PASSWORD|SECRET|TOKEN|CONTROL_DB).*")) {
                                // Every password and secret is a ${VARIABLE} of compose's own environment.
                                assertThat(e.getValue().asText())
                                        .as("%s %s", service.getKey(), e.getKey())
                                        .contains("${");
                                checked.add(service.getKey() + ":" + e.getKey());
                            }
                        }));
        assertThat(checked)
                .contains(
                        "worker:VIGILO_CONTROL_DB",
                        "worker:AWS_SECRET_ACCESS_KEY",
                        "serve:VIGILO_SERVE_TOKEN",
                        "postgres:POSTGRES_PASSWORD");
        assertThat(Files.readString(Manifests.repository().resolve("deploy/compose/storage.toml")))
                .doesNotContainPattern("(?im)^\\s*(access_key|secret)");
    }

    @Test
    void theLocalOverrideChangesOnlyTheThirdPartyImages() throws Exception {
        JsonNode local = Manifests.documents(Manifests.repository().resolve("deploy/compose.local.yaml"))
                .get(0);
        assertThat(schema.violations(local)).isEmpty();
        List<String> services = new ArrayList<>();
        local.get("services").fieldNames().forEachRemaining(services::add);
        // The Vigilo services (worker, serve, cli) run exactly as compose.yaml has them.
        assertThat(services).containsExactlyInAnyOrder("postgres", "s3", "s3-bucket");
        local.get("services").properties().forEach(service -> {
            List<String> keys = new ArrayList<>();
            service.getValue().fieldNames().forEachRemaining(keys::add);
            assertThat(keys).as(service.getKey()).isSubsetOf("image", "volumes");
            assertThat(service.getValue().get("image").asText())
                    .as(service.getKey())
                    .startsWith("${VIGILO_")
                    .contains(":-localhost/");
        });
        assertThat(local.at("/services/s3-bucket/volumes/0").asText()).isEqualTo("objects:/data");
        assertThat(compose.at("/volumes").has("objects")).isTrue();
    }
}
