package dev.vigilo.agent;

import static dev.vigilo.agent.TestSupport.caseOf;
import static dev.vigilo.agent.TestSupport.env;
import static dev.vigilo.agent.TestSupport.q;
import static dev.vigilo.agent.TestSupport.shAgent;
import static dev.vigilo.agent.TestSupport.withVariable;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.vigilo.agent.OpenAiTestServer.Reply;
import dev.vigilo.common.errors.InvalidInputException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Everything an agent or an evaluator hands on (outputs, errors, what observers see) has the run's secret values
 * masked, whoever gave them back: an endpoint echoing its key, a command or evaluator printing a variable it
 * inherited. Real processes and a real local endpoint.
 */
class SecretMaskingTest {
    static final String KEY = "sk-mask-0123456789abcdef";
    static final String JUDGE_KEY = "sk-judge-fedcba9876543210";

    @TempDir
    Path dir;

    OpenAiTestServer server;
    AgentEnvironment env;

    @BeforeEach
    void start() {
        server = OpenAiTestServer.start();
        env = withVariable(withVariable(env(dir), "MASK_TEST_KEY", KEY), "MASK_JUDGE_KEY", JUDGE_KEY);
    }

    @AfterEach
    void stop() {
        server.close();
    }

    /** What an observer was shown, as JSON text. */
    static final class Seen implements AgentObserver {
        final List<String> trees = new ArrayList<>();
        final List<String> errors = new ArrayList<>();

        @Override
        public void onRequest(int attempt, JsonNode request) {
            trees.add(request.toString());
        }

        @Override
        public void onResponse(int attempt, int status, JsonNode response) {
            trees.add(status + " " + response);
        }

        @Override
        public void onEvent(int attempt, JsonNode event) {
            trees.add(event.toString());
        }

        @Override
        public void onAttemptEnd(AgentAttempt attempt) {
            attempt.error().ifPresent(e -> errors.add(e.message()));
        }

        String all() {
            return String.join("\n", trees) + "\n" + String.join("\n", errors);
        }
    }

    private ObjectNode http() {
        ObjectNode n = TestSupport.MAPPER.createObjectNode();
        n.put("kind", "http");
        n.put("url", server.chatUrl().toString());
        n.put("model", "m");
        n.put("api_key_env", "MASK_TEST_KEY");
        n.put("max_attempts", 2);
        return n;
    }

    private AgentOutcome call(JsonNode agentConfig, AgentEnvironment e, Seen seen) {
        try (Agent agent = Agents.create(agentConfig, e)) {
            return agent.run(new AgentCall(caseOf("q-1", "What is 2 + 2?", "4"), seen));
        }
    }

    @Test
    void anEndpointEchoingItsKeyIsMaskedInWhatObserversSeeInErrorsAndInTheOutput() {
        server.enqueue(
                Reply.raw(401, "{\"error\":\"bad key Bearer " + KEY + "\"}"),
                Reply.raw(503, "x".repeat(177) + " Bearer " + KEY + " and more"),
                Reply.content("your key is " + KEY));
        Seen seen = new Seen();
        AgentOutcome o = call(http(), env, seen);
        assertThat(o.error().orElseThrow().message())
                .contains("bad key Bearer ***")
                .doesNotContain(KEY);
        assertThat(seen.all())
                .contains("401 {\"error\":\"bad key Bearer ***\"}")
                .doesNotContain(KEY);

        Seen second = new Seen();
        AgentOutcome ok = call(http(), env, second);
        assertThat(ok.output()).contains("your key is ***");
        // The message cuts the 503 body at 200 characters, inside the key: no piece of it is left.
        assertThat(second.errors.get(0)).contains("Bearer ***").doesNotContain(KEY.substring(0, 10));
        assertThat(second.all())
                .contains("Bearer *** and more", "your key is ***")
                .doesNotContain(KEY);
    }

    @Test
    void everyEnvKeyOfTheRunIsMaskedNotOnlyTheAgentsOwn() {
        JsonNode configuration = q("{'agent':{'kind':'http','api_key_env':'MASK_TEST_KEY'},"
                + "'judges':[{'name':'j','api_key_env':'MASK_JUDGE_KEY'}],"
                + "'tools':[{'api_key_env':'MASK_UNSET_KEY'}]}");
        AgentEnvironment run = env.forRun(configuration);
        assertThat(run.secrets().size()).isEqualTo(2);
        assertThat(run.toString()).doesNotContain(KEY, JUDGE_KEY);
        server.enqueue(Reply.content("judge key " + JUDGE_KEY + ", agent key " + KEY));
        AgentOutcome o = call(http(), run, new Seen());
        assertThat(o.output()).contains("judge key ***, agent key ***");
    }

    @Test
    void aCommandAgentPrintingAKeyItInheritedIsMaskedOnStdoutStderrAndInItsEvents() {
        ObjectNode agent = shAgent("echo \"stderr $MASK_TEST_KEY\" >&2;"
                + " printf '%s\\n' '{\"type\":\"message\",\"text\":\"using '\"$MASK_TEST_KEY\"'\"}' >> \"$VIGILO_EVENTS\";"
                + " printf '%s\\n' '{\"type\":\"x\",\"'\"$MASK_TEST_KEY\"'\":1}' >> \"$VIGILO_EVENTS\";"
                + " if [ \"$VIGILO_ATTEMPT\" = 1 ]; then exit 3; fi; echo \"answer $MASK_TEST_KEY\"");
        agent.put("api_key_env", "MASK_TEST_KEY");
        agent.put("max_attempts", 2);
        Seen seen = new Seen();
        AgentOutcome o = call(agent, env, seen);
        assertThat(o.output()).contains("answer ***");
        assertThat(seen.errors).singleElement().asString().contains("stderr ends: stderr ***");
        assertThat(seen.all())
                .contains("using ***", "{\"type\":\"x\",\"***\":1}")
                .doesNotContain(KEY);
    }

    @Test
    void aCommandAgentNamingAnUnsetKeyVariableFailsUpFront() {
        ObjectNode agent = shAgent("true");
        agent.put("api_key_env", "MASK_TEST_UNSET_VARIABLE");
        assertThatThrownBy(() -> Agents.create(agent, env))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageStartingWith("agent.api_key_env: environment variable MASK_TEST_UNSET_VARIABLE is not set");
    }

    @Test
    void aStderrTailCutInsideTheKeyLeavesNoPieceOfIt() {
        // The kept tail (2 KiB) starts inside the key; the blanks collapse, so the piece would reach the message.
        ObjectNode agent = shAgent("printf '%s' \"$MASK_TEST_KEY\" >&2; head -c 2040 /dev/zero | tr '\\0' ' ' >&2;"
                + " printf end >&2; exit 1");
        AgentOutcome o = call(agent, env.forRun(q("{'agent':{'api_key_env':'MASK_TEST_KEY'}}")), new Seen());
        String message = o.error().orElseThrow().message();
        assertThat(message).endsWith("stderr ends: *** end");
        assertThat(message).doesNotContain(KEY.substring(KEY.length() - 4));
    }

    @Test
    void commandEvaluatorsPrintingAKeyAreMaskedOnStdoutAndStderr() {
        ArrayNode plan = TestSupport.MAPPER.createArrayNode();
        plan.addObject()
                .put("index", 0)
                .put("name", "out")
                .put("kind", "command")
                .putArray("command")
                .add("sh")
                .add("-c")
                .add("cat >/dev/null; echo \"$MASK_TEST_KEY\"");
        plan.addObject()
                .put("index", 1)
                .put("name", "err")
                .put("kind", "command")
                .putArray("command")
                .add("sh")
                .add("-c")
                .add("cat >/dev/null; echo \"saw $MASK_TEST_KEY\" >&2; exit 2");
        EvaluatorSet set = Evaluators.fromPlan(plan, env.forRun(q("{'agent':{'api_key_env':'MASK_TEST_KEY'}}")));
        List<EvaluatorResult> results = set.evaluate(0b11L, caseOf("q-1", "x", "y"), "output");
        assertThat(results.get(0).error().orElseThrow().message()).contains("printed \"***\"");
        assertThat(results.get(1).error().orElseThrow().message()).contains("stderr ends: saw ***");
        results.forEach(r -> assertThat(r.error().orElseThrow().message()).doesNotContain(KEY));
    }

    @Test
    void anOutputThatMaskingMakesTooLargeIsAnError() {
        // A short value is masked where it stands alone; "ab " becomes "*** ", a third longer.
        ObjectNode agent = shAgent("yes ab | head -c 900000 | tr '\\n' ' '");
        AgentEnvironment e = withVariable(env, "MASK_SHORT", "ab").forRun(q("{'x':{'k_env':'MASK_SHORT'}}"));
        AgentOutcome o = call(agent, e, new Seen());
        assertThat(o.error().orElseThrow().type()).isEqualTo(AgentErrorType.OUTPUT_TOO_LARGE);
        assertThat(o.error().orElseThrow().message()).contains("after masking");
    }
}
