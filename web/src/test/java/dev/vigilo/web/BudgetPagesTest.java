package dev.vigilo.web;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vigilo.exec.ExecFixture;
import dev.vigilo.exec.ExecutionConfig;
import dev.vigilo.exec.Placements;
import dev.vigilo.exec.admission.Admission;
import dev.vigilo.exec.settlement.RunPause;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The run page and API of a run with a budget: the budget line, and a pause for the budget saying how to raise it. */
class BudgetPagesTest {
    @TempDir
    Path dir;

    @Test
    void theRunPageShowsTheBudgetAndABudgetPause() throws Exception {
        try (ExecFixture fx = new ExecFixture(dir, 3);
                Placements placements = Placements.open(fx.control, ExecutionConfig.defaults())) {
            UUID run = fx.prepare("""
                    name: budgeted
                    agent: {kind: command, command: ["cat"]}
                    evaluators: [{name: exact, kind: exact_match}]
                    gates: [{name: all, required_evaluators: [exact], min_pass_rate: 0.5}]
                    budget: {max_cost_usd: 25.00, max_tokens: 50000000}
                    """);
            new Admission(placements, fx.storage).admit(run);
            // What a worker does when the budget cannot cover the next call: an interrupting pause for the budget.
            new RunPause(placements).pause(run, RunPause.BUDGET, true);
            try (Dashboard dashboard = Dashboard.start(
                    new DashboardOptions(DashboardOptions.LOOPBACK, 0, Optional.empty()),
                    DashboardSources.all(
                            fx.control.jdbi(), placements, fx.storage, Optional.empty(), List.of(), List.of(dir)))) {
                String base = "http://127.0.0.1:" + dashboard.port();
                HttpResponse<String> page = Http.get(base + "/runs/" + run);
                assertThat(page.statusCode()).as(page.body()).isEqualTo(200);
                assertThat(page.body())
                        .contains("<p id=\"budget-line\">budget $25: $0 spent, $0 reserved; 50,000,000 tokens: 0 spent,"
                                + " 0 reserved</p>")
                        .contains("its budget cannot cover its next model call")
                        .contains("vigilo run resume " + run + " --budget-usd N")
                        .as("the frozen budget among the profile's run-wide settings")
                        .contains("{&quot;max_cost_usd&quot;:&quot;25&quot;,&quot;max_tokens&quot;:50000000}");
                HttpResponse<String> api = Http.get(base + "/api/runs/" + run);
                assertThat(api.body())
                        .contains("\"budget\":{\"max_cost_usd\":\"25\",\"max_tokens\":50000000,")
                        .contains("\"paused\":{\"reason\":\"budget\"");
            }
        }
    }
}
