package dev.vigilo.web;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.vigilo.control.ControlDatabase;
import dev.vigilo.control.ControlSettings;
import dev.vigilo.control.TestPostgres;
import dev.vigilo.dataset.DatasetCatalog;
import dev.vigilo.dataset.DatasetEntry;
import dev.vigilo.dataset.UploadProgress;
import dev.vigilo.dataset.UploadRequest;
import dev.vigilo.exec.ExecutionConfig;
import dev.vigilo.exec.Placements;
import dev.vigilo.exec.admission.Admission;
import dev.vigilo.exec.worker.Worker;
import dev.vigilo.plan.CreateRequest;
import dev.vigilo.plan.GroupProfiles;
import dev.vigilo.plan.ProfileInput;
import dev.vigilo.plan.RunGroups;
import dev.vigilo.plan.RunPreparation;
import dev.vigilo.storage.ObjectStore;
import dev.vigilo.storage.ObjectStores;
import dev.vigilo.storage.StorageConfig;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.By;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.support.ui.ExpectedConditions;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * Run groups on the dashboard (docs/web.md, "Run groups") over HTTP: a group of three agents made the way {@code run
 * create --agents} makes one (its profiles from {@link GroupProfiles}, recorded by {@link RunGroups}, each run
 * prepared and admitted) and executed by a real worker; the runs list shows each run's group and agent, {@code
 * /groups/NAME} and {@code /groups/ID} open the matrix of its runs headed by the group and the agents, the API lists
 * the members, and an unknown group or a group without runs is a 404; in Chromium, the runs list's group link opens
 * the group's matrix (screenshot {@code 44-group-matrix}) and the runs page's link opens the list of groups ({@code /groups},
 * each member's status and pass rate; screenshot {@code 45-groups}), from which a group opens too; from the group's
 * matrix the comparison of two agents downloads its flipped cases as JSON lines and CSV (parsed; screenshot {@code
 * 46-group-compare}).
 */
class GroupPagesTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path home;

    @TempDir
    Path profileDir;

    ControlDatabase control;
    Placements placements;
    ChromeDriver driver;
    ObjectStore store;
    Dashboard dashboard;

    @AfterEach
    void stop() {
        if (driver != null) {
            driver.quit();
        }
        if (dashboard != null) {
            dashboard.close();
        }
        if (store != null) {
            store.close();
        }
        if (placements != null) {
            placements.close();
        }
        if (control != null) {
            control.close();
        }
    }

    @Test
    void aGroupOpensAsTheMatrixOfItsRuns() throws Exception {
        RunGroups.Group g = makeGroup();
        String base = "http://127.0.0.1:" + dashboard.port();

        String list = Http.get(base + "/runs").body();
        assertThat(list)
                .contains("<a href=\"/groups/" + g.groupId() + "\" title=\"open the group as a matrix\">trio</a>")
                .contains("trio:right")
                .contains("trio:zero");
        JsonNode api = JSON.readTree(Http.get(base + "/api/runs").body());
        for (JsonNode r : api.path("runs")) {
            assertThat(r.path("group").path("name").asText()).isEqualTo("trio");
        }

        for (String key : List.of("trio", g.groupId().toString())) {
            HttpResponse<String> open = Http.get(base + "/groups/" + key);
            assertThat(open.statusCode()).isEqualTo(303);
            String location = open.headers().firstValue("Location").orElseThrow();
            assertThat(location)
                    .isEqualTo("/matrix?run=" + g.members().get(0).runId() + "&run="
                            + g.members().get(1).runId() + "&run="
                            + g.members().get(2).runId());
            HttpResponse<String> page = Http.get(base + location);
            assertThat(page.statusCode()).isEqualTo(200);
            assertThat(page.body())
                    .contains("<h1 id=\"group-heading\">Group trio")
                    .contains("<span class=\"agent-name\">right</span>")
                    .contains("<span class=\"agent-name\">zero</span>")
                    .contains("<span class=\"agent-name\">again</span>")
                    .contains("<title>Group trio");
            // The first agent passes every case, the second none: 100.0% and 0.0% (-100.0 points) on the gate.
            assertThat(page.body()).contains("100.0%").contains("0.0%");
        }
        // Each member's page names its group and agent.
        String runPage = Http.get(base + "/runs/" + g.members().get(1).runId()).body();
        assertThat(runPage)
                .contains("<p id=\"run-group\">Agent <strong>zero</strong> of run group <a href=\"/groups/"
                        + g.groupId() + "\"");
        JsonNode runApi = JSON.readTree(
                Http.get(base + "/api/runs/" + g.members().get(1).runId()).body());
        assertThat(runApi.path("group").path("agent").asText()).isEqualTo("zero");
        JsonNode members = JSON.readTree(Http.get(base + "/api/groups/trio").body());
        assertThat(members.path("members")).hasSize(3);
        assertThat(members.path("members").get(1).path("agent").asText()).isEqualTo("zero");
        assertThat(members.path("members").get(1).path("created").asBoolean()).isTrue();

        // The list of groups: newest first (the empty group was recorded after trio), each member's status and
        // pass rate over planned, the empty group marked incomplete; its API as `run status GROUP --json` has members.
        String groupsPage = Http.get(base + "/groups").body();
        assertThat(groupsPage)
                .contains("<title>Run groups · Vigilo</title>")
                .contains("<a href=\"/groups/" + g.groupId() + "\" title=\"open the group as a matrix\">trio</a>")
                .contains("incomplete: 1 of 1 runs not created yet")
                .contains("<a href=\"/runs/" + g.members().get(1).runId() + "\" class=\"agent\">zero</a>")
                .contains("all 100.0%")
                .contains("all 0.0%");
        assertThat(groupsPage.indexOf(">empty</a>")).isLessThan(groupsPage.indexOf(">trio</a>"));
        assertThat(list).contains("<a href=\"/groups\" id=\"groups-link\">Run groups</a>");
        JsonNode groupsApi = JSON.readTree(Http.get(base + "/api/groups").body());
        assertThat(groupsApi.path("groups")).hasSize(2);
        assertThat(groupsApi.path("groups").get(0).path("name").asText()).isEqualTo("empty");
        assertThat(groupsApi
                        .path("groups")
                        .get(0)
                        .path("members")
                        .get(0)
                        .path("status")
                        .asText())
                .isEqualTo("not_created");
        JsonNode trio = groupsApi.path("groups").get(1);
        assertThat(trio.path("group_id").asText()).isEqualTo(g.groupId().toString());
        assertThat(trio.path("members").findValuesAsText("agent")).containsExactly("right", "zero", "again");
        assertThat(trio.path("members").findValuesAsText("status")).containsOnly("settled");
        assertThat(trio.path("members")
                        .get(0)
                        .path("gates")
                        .get(0)
                        .path("pass_rate")
                        .asDouble())
                .isEqualTo(1.0);
        assertThat(trio.path("members")
                        .get(1)
                        .path("gates")
                        .get(0)
                        .path("pass_rate")
                        .asDouble())
                .isEqualTo(0.0);
        assertThat(trio.path("members").get(1).path("verdict").asText()).isEqualTo("failed");
        assertThat(Http.get(base + "/api/groups?limit=1").body()).doesNotContain("trio");
        assertThat(Http.get(base + "/groups?limit=0").statusCode()).isEqualTo(400);

        assertThat(Http.get(base + "/groups/no-such").statusCode()).isEqualTo(404);
        HttpResponse<String> empty = Http.get(base + "/groups/empty");
        assertThat(empty.statusCode()).isEqualTo(404);
        assertThat(empty.body()).contains("has no run yet");
        // Any matrix whose runs are all of one group is headed by it.
        String plain = Http.get(base + "/matrix?run=" + g.members().get(0).runId() + "&run="
                        + g.members().get(1).runId())
                .body();
        assertThat(plain).contains("Group trio");
    }

    /**
     * The group {@code trio} of three agents ({@code right}: every case passes; {@code zero}: none; {@code again}:
     * every case) executed by a real worker, an empty group {@code empty}, and the dashboard over them.
     */
    private RunGroups.Group makeGroup() throws Exception {
        control = ControlDatabase.open(new ControlSettings.Jdbc(TestPostgres.newDatabaseUrl()));
        placements = Placements.open(control, ExecutionConfig.defaults());
        StorageConfig storage = StorageConfig.localDefault(home.resolve("objects"));
        store = ObjectStores.open(storage.defaultStore());
        StringBuilder lines = new StringBuilder();
        for (int i = 0; i < 6; i++) {
            lines.append("{\"id\":\"c")
                    .append(i)
                    .append("\",\"input\":\"what is ")
                    .append(i)
                    .append(" * 2\",\"expected\":\"")
                    .append(i * 2)
                    .append("\"}\n");
        }
        Path cases = Files.writeString(home.resolve("cases.jsonl"), lines.toString());
        DatasetEntry dataset = new DatasetCatalog(control.jdbi())
                .upload(
                        new UploadRequest(cases, Optional.of("groups"), Optional.of(java.util.UUID.randomUUID())),
                        store,
                        UploadProgress.NONE);
        Path right = Files.writeString(home.resolve("right.sh"), """
                n=$(sed -n 's/.*what is \\([0-9]*\\) \\* 2.*/\\1/p')
                echo $((n * 2))
                """);
        String profile = """
                name: trio
                agent: {kind: command, command: [sh, "%s"], max_attempts: 1, timeout_seconds: 60}
                evaluators:
                  - {name: exact, kind: exact_match}
                gates:
                  - {name: all, required_evaluators: [exact], min_pass_rate: 0.5}
                """.formatted(right);
        Path agents = Files.writeString(home.resolve("agents.yaml"), """
                agents:
                  - name: right
                    agent: {kind: command, command: [sh, "%1$s"], timeout_seconds: 60}
                  - name: zero
                    agent: {kind: command, command: [sh, -c, "cat >/dev/null; echo nope"], timeout_seconds: 60}
                  - name: again
                    agent: {kind: command, command: [sh, "%1$s"], max_attempts: 2, timeout_seconds: 60}
                """.formatted(right));
        GroupProfiles.Expansion x = GroupProfiles.expand(ProfileInput.inline(profile), agents);
        RunGroups groups = new RunGroups(control.jdbi());
        RunGroups.Group g = groups.record(
                "trio",
                dataset.uploadId(),
                x.profilesSha256(),
                x.members().stream().map(GroupProfiles.Member::agentName).toList());
        // An empty group (as a creation killed at once leaves it) has no page yet.
        groups.record("empty", dataset.uploadId(), x.profilesSha256(), List.of("right"));
        for (int i = 0; i < 3; i++) {
            new RunPreparation(control.jdbi(), storage)
                    .create(new CreateRequest(
                            ProfileInput.inline(x.members().get(i).text()),
                            dataset.uploadId(),
                            Optional.of(g.members().get(i).runId()),
                            false));
            new Admission(placements, storage).admit(g.members().get(i).runId());
        }
        groups.complete(g.groupId());
        new Worker(
                        placements,
                        storage,
                        new Worker.Options(
                                2,
                                true,
                                Duration.ofSeconds(20),
                                Duration.ofSeconds(2),
                                Duration.ofMillis(100),
                                Duration.ofMillis(200),
                                Duration.ofSeconds(5)),
                        Worker.Listener.NONE)
                .run();
        dashboard = Dashboard.start(
                new DashboardOptions(DashboardOptions.LOOPBACK, 0, Optional.empty()),
                DashboardSources.all(control.jdbi(), placements, storage, Optional.empty(), List.of(), List.of(home)));
        return g;
    }

    @Test
    void theGroupOpensFromTheRunsListInChromium() throws Exception {
        Path browser = Chromium.require("GroupPagesTest");
        RunGroups.Group g = makeGroup();
        String base = "http://127.0.0.1:" + dashboard.port();
        driver = Chromium.start(browser, profileDir);
        WebDriverWait wait = new WebDriverWait(driver, Duration.ofSeconds(30));
        // The runs page links the list of groups; the list shows each member and opens a group's matrix.
        driver.get(base + "/runs");
        wait.until(ExpectedConditions.presenceOfElementLocated(By.id("runs")));
        driver.findElement(By.id("groups-link")).click();
        wait.until(ExpectedConditions.presenceOfElementLocated(By.id("groups")));
        assertThat(driver.getTitle()).startsWith("Run groups");
        List<WebElement> rows = driver.findElements(By.cssSelector("#groups tbody tr"));
        assertThat(rows).hasSize(2);
        assertThat(rows.get(0).findElement(By.cssSelector(".group-name")).getText())
                .startsWith("empty")
                .contains("incomplete");
        WebElement trioRow = rows.get(1);
        assertThat(trioRow.findElements(By.cssSelector("ul.members a.agent")).stream()
                        .map(WebElement::getText)
                        .toList())
                .containsExactly("right", "zero", "again");
        assertThat(trioRow.findElements(By.cssSelector("ul.members .pass-rates")).stream()
                        .map(WebElement::getText)
                        .toList())
                .containsExactly("all 100.0%", "all 0.0%", "all 100.0%");
        Chromium.noConsoleErrors(driver, "the run groups list");
        Chromium.screenshot(driver, "45-groups");
        trioRow.findElement(By.cssSelector(".group-name a")).click();
        wait.until(ExpectedConditions.presenceOfElementLocated(By.id("group-heading")));
        assertThat(driver.findElement(By.id("group-heading")).getText()).startsWith("Group trio");
        driver.navigate().back();
        wait.until(ExpectedConditions.presenceOfElementLocated(By.id("groups")));

        driver.get(base + "/runs");
        wait.until(ExpectedConditions.presenceOfElementLocated(By.id("runs")));
        List<WebElement> links = driver.findElements(By.cssSelector("#runs td.group a"));
        assertThat(links).hasSize(3);
        assertThat(links.get(0).getText()).isEqualTo("trio");
        links.get(0).click();
        wait.until(ExpectedConditions.presenceOfElementLocated(By.id("group-heading")));
        assertThat(driver.findElement(By.id("group-heading")).getText()).startsWith("Group trio");
        assertThat(driver.findElements(By.cssSelector("#matrix-runs .agent-name")).stream()
                        .map(WebElement::getText)
                        .toList())
                .containsExactly("right", "zero", "again");
        assertThat(driver.findElements(By.cssSelector("#matrix tbody tr"))).hasSize(6);
        assertThat(driver.getCurrentUrl())
                .contains("/matrix?run=" + g.members().get(0).runId());
        Chromium.noConsoleErrors(driver, "a group's matrix");
        Chromium.screenshot(driver, "44-group-matrix");

        // From the matrix, the comparison of the first agent with the second: every case flipped (right passes all,
        // zero none), and both downloads of the flipped cases as real Chromium downloads, parsed.
        driver.findElements(By.cssSelector("#matrix-runs a.compare-link"))
                .get(0)
                .click();
        wait.until(ExpectedConditions.presenceOfElementLocated(By.id("flips")));
        assertThat(driver.getCurrentUrl())
                .endsWith("/runs/" + g.members().get(0).runId() + "/compare/"
                        + g.members().get(1).runId());
        assertThat(driver.findElements(By.cssSelector("#flips tbody tr"))).hasSize(6);
        Path downloads = Files.createDirectories(home.resolve("downloads"));
        driver.executeCdpCommand(
                "Browser.setDownloadBehavior",
                java.util.Map.of(
                        "behavior",
                        "allow",
                        "downloadPath",
                        downloads.toAbsolutePath().toString()));
        List<String> expected = List.of("c0", "c1", "c2", "c3", "c4", "c5");
        driver.findElement(By.id("flips-jsonl")).click();
        List<String> jsonl = Files.readAllLines(downloaded(wait, downloads, ".jsonl"));
        assertThat(jsonl.stream().map(l -> readTree(l).path("case_id").asText()).toList())
                .isEqualTo(expected);
        assertThat(readTree(jsonl.get(0)).path("changes").toString()).contains("all");
        driver.findElement(By.id("flips-csv")).click();
        List<String> csv = Files.readAllLines(downloaded(wait, downloads, ".csv"));
        assertThat(csv.get(0)).isEqualTo("case_id,ordinal_a,ordinal_b,gate,a,b,change");
        assertThat(csv.subList(1, csv.size()).stream()
                        .map(l -> l.split(",")[0] + " " + l.split(",")[3])
                        .toList())
                .isEqualTo(expected.stream().map(c -> c + " all").toList());
        Chromium.noConsoleErrors(driver, "the comparison of two agents");
        Chromium.screenshot(driver, "46-group-compare");
    }

    private static JsonNode readTree(String line) {
        try {
            return JSON.readTree(line);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /** The finished download whose name ends with {@code suffix} (Chromium renames it once written whole). */
    private static Path downloaded(WebDriverWait wait, Path dir, String suffix) {
        return wait.until(d -> {
            try (var files = Files.list(dir)) {
                return files.filter(f -> f.getFileName().toString().endsWith(suffix))
                        .findFirst()
                        .orElse(null);
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        });
    }
}
