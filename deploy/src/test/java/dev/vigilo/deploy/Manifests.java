package dev.vigilo.deploy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.autoscaling.v2.HorizontalPodAutoscaler;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.cfg.MapperConfig;
import tools.jackson.databind.introspect.Annotated;
import tools.jackson.databind.introspect.JacksonAnnotationIntrospector;
import tools.jackson.databind.json.JsonMapper;

/**
 * Reads the deployment files of {@code deploy/} the way their consumers do: Kubernetes manifests into fabric8's typed
 * model classes (the API server's schema as Java types), refusing any field the type does not have and any value of
 * the wrong type; YAML through SnakeYAML, which resolves anchors and merge keys as compose and kubectl do.
 */
final class Manifests {
    /** The kinds deploy/k8s uses, by apiVersion and kind; any other is an error, so a new kind must be added here. */
    static final Map<String, Class<? extends HasMetadata>> TYPES = Map.of(
            "v1/ConfigMap", ConfigMap.class,
            "v1/Secret", Secret.class,
            "v1/Service", Service.class,
            "apps/v1/Deployment", Deployment.class,
            "policy/v1/PodDisruptionBudget", PodDisruptionBudget.class,
            "batch/v1/Job", Job.class,
            "autoscaling/v2/HorizontalPodAutoscaler", HorizontalPodAutoscaler.class);

    private static final ObjectMapper TREES = new ObjectMapper();

    /**
     * fabric8's model classes keep unknown fields in an any-setter map ({@code additionalProperties}), so that a
     * client survives a newer server; a schema check must not: with the any-setters switched off, an unknown field
     * fails the read (FAIL_ON_UNKNOWN_PROPERTIES).
     */
    private static final JsonMapper STRICT = JsonMapper.builder()
            .annotationIntrospector(new JacksonAnnotationIntrospector() {
                @Override
                public Boolean hasAnySetter(MapperConfig<?> config, Annotated a) {
                    return Boolean.FALSE;
                }
            })
            .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES)
            .build();

    private Manifests() {}

    /** The repository's root (the build passes it; the module's parent directory otherwise). */
    static Path repository() {
        return Path.of(System.getProperty("vigilo.repository", ".."))
                .toAbsolutePath()
                .normalize();
    }

    /** Every YAML file under {@code dir}, sorted. */
    static List<Path> yamlFiles(Path dir) {
        try (Stream<Path> s = Files.walk(dir)) {
            return s.filter(p -> p.getFileName().toString().endsWith(".yaml"))
                    .sorted()
                    .toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The documents of a YAML text, as Jackson trees (anchors and merge keys resolved). */
    static List<JsonNode> documents(String yaml) {
        Yaml loader = new Yaml(new SafeConstructor(new LoaderOptions()));
        List<JsonNode> out = new ArrayList<>();
        for (Object doc : loader.loadAll(yaml)) {
            if (doc != null) {
                out.add(TREES.valueToTree(doc));
            }
        }
        return out;
    }

    static List<JsonNode> documents(Path file) {
        try {
            return documents(Files.readString(file));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** One manifest read into its typed model class; an unknown kind, field or a wrong value type throws. */
    static HasMetadata typed(JsonNode manifest) {
        String key = manifest.path("apiVersion").asText() + "/"
                + manifest.path("kind").asText();
        Class<? extends HasMetadata> type = TYPES.get(key);
        if (type == null) {
            throw new IllegalArgumentException("no model class for " + key + " (add it to Manifests.TYPES)");
        }
        return STRICT.readValue(manifest.toString(), type);
    }
}
