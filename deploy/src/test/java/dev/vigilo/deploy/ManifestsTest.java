package dev.vigilo.deploy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.autoscaling.v2.HorizontalPodAutoscaler;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Every manifest of deploy/k8s read by a real Kubernetes schema consumer (fabric8's typed model, unknown fields
 * refused), the kustomization's resources present, and what docs/deployment.md promises of them: probes, resources
 * and a grace period covering a chunk give-back, a disruption budget over the workers, credentials only from Secrets.
 */
class ManifestsTest {
    /** cli's SignalStop.GRACE: how long a signalled worker may take to give its chunks back before it exits. */
    private static final long WORKER_GIVE_BACK_SECONDS = 40;

    /** Environment variables that carry a credential: they must come from a Secret, never a literal value. */
    private static final Pattern CREDENTIAL = Pattern.compile("(?i).*(PASSWORD|SECRET|TOKEN|ACCESS_KEY|CONTROL_DB).*");

    private static final Map<String, HasMetadata> BY_NAME = new LinkedHashMap<>();

    @BeforeAll
    static void readAll() {
        Path k8s = Manifests.repository().resolve("deploy/k8s");
        for (Path file : Manifests.yamlFiles(k8s)) {
            if (file.getFileName().toString().equals("kustomization.yaml")) {
                continue;
            }
            for (JsonNode doc : Manifests.documents(file)) {
                HasMetadata m = Manifests.typed(doc);
                BY_NAME.put(m.getKind() + "/" + m.getMetadata().getName(), m);
            }
        }
    }

    @Test
    void everyManifestIsReadByItsTypedModelAndTheKustomizationListsOnlyResources() throws Exception {
        assertThat(BY_NAME)
                .containsKeys(
                        "ConfigMap/vigilo-config",
                        "Secret/vigilo-credentials",
                        "Deployment/vigilo-worker",
                        "PodDisruptionBudget/vigilo-worker",
                        "Deployment/vigilo-dashboard",
                        "Service/vigilo-dashboard",
                        "Job/vigilo-run-create",
                        "Job/vigilo-datagen-topics",
                        "HorizontalPodAutoscaler/vigilo-worker");
        Path k8s = Manifests.repository().resolve("deploy/k8s");
        JsonNode kustomization =
                Manifests.documents(k8s.resolve("kustomization.yaml")).get(0);
        List<String> keys = new ArrayList<>();
        kustomization.fieldNames().forEachRemaining(keys::add);
        // Only resources: nothing that a check of the files one by one would not see (patches, generators).
        assertThat(keys).containsExactlyInAnyOrder("apiVersion", "kind", "resources");
        for (JsonNode r : kustomization.get("resources")) {
            Path file = k8s.resolve(r.asText());
            assertThat(file).as("kustomization resource %s", r.asText()).isRegularFile();
            for (JsonNode doc : Manifests.documents(file)) {
                assertThat(Manifests.typed(doc).getMetadata().getName()).startsWith("vigilo-");
            }
        }
        // The example Secret is never applied by the base: the real one is made by hand (docs/deployment.md).
        assertThat(kustomization.get("resources").toString()).doesNotContain("secret");
    }

    @Test
    void theConsumerRefusesUnknownFieldsAndWrongTypes() {
        JsonNode deployment = Manifests.documents("""
                        apiVersion: apps/v1
                        kind: Deployment
                        metadata: {name: x}
                        spec:
                          template:
                            spec:
                              containers:
                                - name: worker
                                  image: i
                                  livenessProbes: {httpGet: {path: /healthz, port: 9400}}
                        """).get(0);
        assertThatThrownBy(() -> Manifests.typed(deployment)).hasMessageContaining("livenessProbes");
        JsonNode job = Manifests.documents("""
                        apiVersion: batch/v1
                        kind: Job
                        metadata: {name: x}
                        spec: {parallelism: many}
                        """).get(0);
        assertThatThrownBy(() -> Manifests.typed(job)).hasMessageContaining("parallelism");
        JsonNode unknownKind = Manifests.documents("apiVersion: v1\nkind: Pod\nmetadata: {name: x}\n")
                .get(0);
        assertThatThrownBy(() -> Manifests.typed(unknownKind)).hasMessageContaining("v1/Pod");
    }

    @Test
    void workersHaveProbesResourcesAGracePeriodCoveringAGiveBackAndADisruptionBudget() {
        Deployment worker = (Deployment) BY_NAME.get("Deployment/vigilo-worker");
        PodSpec pod = worker.getSpec().getTemplate().getSpec();
        assertThat(pod.getTerminationGracePeriodSeconds()).isGreaterThan(WORKER_GIVE_BACK_SECONDS);
        assertThat(pod.getSecurityContext().getRunAsNonRoot()).isTrue();
        Container c = pod.getContainers().get(0);
        assertThat(c.getArgs()).startsWith("worker").contains("--metrics-port");
        String port = c.getArgs().get(c.getArgs().indexOf("--metrics-port") + 1);
        assertThat(c.getPorts())
                .anySatisfy(p -> assertThat(p.getContainerPort().toString()).isEqualTo(port));
        assertThat(c.getLivenessProbe().getHttpGet().getPath()).isEqualTo("/healthz");
        assertThat(c.getReadinessProbe().getHttpGet().getPath()).isEqualTo("/readyz");
        assertThat(c.getResources().getRequests()).containsKeys("cpu", "memory");
        assertThat(Quantity.getAmountInBytes(c.getResources().getLimits().get("memory")))
                .isGreaterThanOrEqualTo(
                        Quantity.getAmountInBytes(c.getResources().getRequests().get("memory")));
        assertThat(env(c)).containsKeys("VIGILO_CONTROL_DB", "VIGILO_STORAGE_CONFIG", "VIGILO_EXECUTION_CONFIG");

        PodDisruptionBudget pdb = (PodDisruptionBudget) BY_NAME.get("PodDisruptionBudget/vigilo-worker");
        assertThat(worker.getSpec().getTemplate().getMetadata().getLabels())
                .containsAllEntriesOf(pdb.getSpec().getSelector().getMatchLabels());
        assertThat(worker.getSpec().getSelector().getMatchLabels())
                .isEqualTo(pdb.getSpec().getSelector().getMatchLabels());

        HorizontalPodAutoscaler hpa = (HorizontalPodAutoscaler) BY_NAME.get("HorizontalPodAutoscaler/vigilo-worker");
        assertThat(hpa.getSpec().getScaleTargetRef().getName())
                .isEqualTo(worker.getMetadata().getName());
        assertThat(hpa.getSpec().getMetrics().get(0).getExternal().getMetric().getName())
                .contains("pending_chunks");
    }

    @Test
    void credentialsComeOnlyFromSecretsAndConfigurationFromTheConfigMap() {
        ConfigMap config = (ConfigMap) BY_NAME.get("ConfigMap/vigilo-config");
        assertThat(config.getData()).containsKeys("storage.toml", "execution.toml");
        List<String> checked = new ArrayList<>();
        for (HasMetadata m : BY_NAME.values()) {
            PodSpec pod = podSpec(m);
            if (pod == null) {
                continue;
            }
            for (Container c : pod.getContainers()) {
                for (EnvVar e : c.getEnv()) {
                    if (CREDENTIAL.matcher(e.getName()).matches()) {
                        assertThat(e.getValue())
                                .as(
                                        "%s %s: a credential as a literal value",
                                        m.getMetadata().getName(), e.getName())
                                .isNull();
                        assertThat(e.getValueFrom().getSecretKeyRef().getName()).isEqualTo("vigilo-credentials");
                        checked.add(m.getMetadata().getName() + ":" + e.getName());
                    }
                }
                assertThat(c.getArgs()).noneMatch(a -> a.contains("password") || a.startsWith("--token"));
            }
            assertThat(pod.getVolumes())
                    .filteredOn(v -> v.getConfigMap() != null)
                    .allSatisfy(v -> assertThat(BY_NAME)
                            .containsKey("ConfigMap/" + v.getConfigMap().getName()));
        }
        assertThat(checked)
                .contains(
                        "vigilo-worker:VIGILO_CONTROL_DB",
                        "vigilo-worker:AWS_SECRET_ACCESS_KEY",
                        "vigilo-worker:VIGILO_METRICS_TOKEN",
                        "vigilo-dashboard:VIGILO_SERVE_TOKEN",
                        "vigilo-run-create:VIGILO_CONTROL_DB",
                        "vigilo-datagen-topics:AWS_SECRET_ACCESS_KEY");
    }

    @Test
    void theDatagenJobRunsSeveralPodsOverOneS3DurableRoot() {
        Job datagen = (Job) BY_NAME.get("Job/vigilo-datagen-topics");
        assertThat(datagen.getSpec().getParallelism()).isGreaterThan(1);
        List<String> args =
                datagen.getSpec().getTemplate().getSpec().getContainers().get(0).getArgs();
        assertThat(args).startsWith("datagen", "run");
        assertThat(args.get(args.indexOf("--durable-root") + 1)).startsWith("s3://");
        Job create = (Job) BY_NAME.get("Job/vigilo-run-create");
        assertThat(create.getSpec()
                        .getTemplate()
                        .getSpec()
                        .getContainers()
                        .get(0)
                        .getArgs())
                .startsWith("run", "create")
                .contains("--run-id");
    }

    private static Map<String, EnvVar> env(Container c) {
        Map<String, EnvVar> out = new LinkedHashMap<>();
        c.getEnv().forEach(e -> out.put(e.getName(), e));
        return out;
    }

    private static PodSpec podSpec(HasMetadata m) {
        if (m instanceof Deployment d) {
            return d.getSpec().getTemplate().getSpec();
        }
        if (m instanceof Job j) {
            return j.getSpec().getTemplate().getSpec();
        }
        return null;
    }
}
