package dev.vigilo.agent;

import static dev.vigilo.agent.TestSupport.caseOf;
import static dev.vigilo.agent.TestSupport.env;
import static dev.vigilo.agent.TestSupport.q;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.vigilo.common.errors.InvalidInputException;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The tool_use evaluator: required, forbidden and counted tool calls of the answering attempt. */
class ToolUseEvaluatorTest {
    @TempDir
    Path dir;

    EvaluatorSet plan(String entry) {
        ObjectNode e = (ObjectNode) q(entry);
        e.put("index", 0);
        ArrayNode plan = TestSupport.MAPPER.createArrayNode().add(e);
        return Evaluators.fromPlan(plan, env(dir));
    }

    EvaluatorResult judge(String entry, AgentToolCall... calls) {
        return plan(entry)
                .evaluate(
                        1L, caseOf("q-1", "question", null), "42", EvaluationContext.NONE.withToolCalls(List.of(calls)))
                .get(0);
    }

    static AgentToolCall call(String name, String arguments) {
        return new AgentToolCall("id-" + name, name, arguments);
    }

    @Test
    void aRequiredCallMatchesByNameAndArgumentsAsASubset() {
        String entry = "{'name':'t','kind':'tool_use','require':[{'name':'add','arguments':{'a':17}}],"
                + "'forbid':['delete_file'],'max_calls':3}";
        EvaluatorResult r = judge(entry, call("lookup", "{}"), call("add", "{\"a\":17.0,\"b\":25}"));
        assertThat(r.status()).isEqualTo(EvaluatorResult.Status.PASSED);
        assertThat(r.score()).isEqualTo(1.0);
        assertThat(r.reason().orElseThrow())
                .contains("2 tool calls, required `add` (call 2), none forbidden, within max_calls 3");
        EvaluatorResult wrong = judge(entry, call("add", "{\"a\":18,\"b\":25}"));
        assertThat(wrong.status()).isEqualTo(EvaluatorResult.Status.FAILED);
        assertThat(wrong.reason().orElseThrow())
                .contains("missing call `add` with arguments `{\"a\":17}`; calls made: `add`");
        EvaluatorResult notJson = judge(entry, call("add", "{\"a\":17,"));
        assertThat(notJson.reason().orElseThrow()).contains("missing call `add`");
    }

    @Test
    void forbiddenAndExcessCallsAreNamed() {
        String entry = "{'name':'t','kind':'tool_use','forbid':['delete_file'],'max_calls':2}";
        EvaluatorResult r = judge(entry, call("ls", "{}"), call("delete_file", "{\"path\":\"/\"}"), call("ls", "{}"));
        assertThat(r.status()).isEqualTo(EvaluatorResult.Status.FAILED);
        assertThat(r.reason().orElseThrow())
                .contains("forbidden call `delete_file` (call 2); 3 calls, over max_calls 2 (excess from call 3,"
                        + " `ls`); calls made: `ls, delete_file, ls`");
        assertThat(judge(entry).reason().orElseThrow()).contains("0 tool calls, none forbidden, within max_calls 2");
    }

    @Test
    void orderedRequirementsMustAppearInOrderEachMatchedByItsOwnCall() {
        String ordered = "{'name':'t','kind':'tool_use','ordered':true,'require':[{'name':'search'},{'name':'read'}]}";
        assertThat(judge(ordered, call("search", "{}"), call("read", "{}")).status())
                .isEqualTo(EvaluatorResult.Status.PASSED);
        EvaluatorResult wrongOrder = judge(ordered, call("read", "{}"), call("search", "{}"));
        assertThat(wrongOrder.status()).isEqualTo(EvaluatorResult.Status.FAILED);
        assertThat(wrongOrder.reason().orElseThrow()).contains("missing call `read` after call 2");
        String unordered = "{'name':'t','kind':'tool_use','require':[{'name':'search'},{'name':'read'}]}";
        assertThat(judge(unordered, call("read", "{}"), call("search", "{}")).status())
                .isEqualTo(EvaluatorResult.Status.PASSED);
        String twice = "{'name':'t','kind':'tool_use','require':[{'name':'read'},{'name':'read'}]}";
        assertThat(judge(twice, call("read", "{}")).reason().orElseThrow()).contains("missing call `read`");
    }

    @Test
    void theCanonicalFormOfAProfileIsRead() {
        String entry = "{'name':'t','kind':'tool_use','require':[],'forbid':['rm'],'max_calls':null,'ordered':false}";
        assertThat(judge(entry, call("ls", "{}")).status()).isEqualTo(EvaluatorResult.Status.PASSED);
        assertThat(judge(entry, call("rm", "{}")).status()).isEqualTo(EvaluatorResult.Status.FAILED);
    }

    @Test
    void aPlanEntryWithNothingToCheckIsRefused() {
        assertThatThrownBy(() -> plan("{'name':'t','kind':'tool_use'}"))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("needs require, forbid or max_calls");
    }

    @Test
    void aCommandAgentsToolCallEventsAreTheCallsJudged() {
        ObjectNode agent = TestSupport.shAgent("printf '%s\\n' '{\"type\":\"tool_call\",\"id\":\"c1\",\"name\":\"add\","
                + "\"arguments\":{\"a\":17,\"b\":25}}' '{\"type\":\"tool_result\",\"id\":\"c1\",\"content\":\"42\"}'"
                + " > \"$VIGILO_EVENTS\"; echo 42");
        try (Agent a = Agents.create(agent, env(dir))) {
            AgentOutcome o = a.run(AgentCall.of(caseOf("q-1", "question", null)));
            assertThat(o.toolCalls()).containsExactly(new AgentToolCall("c1", "add", "{\"a\":17,\"b\":25}"));
            EvaluatorResult r = plan("{'name':'t','kind':'tool_use','require':[{'name':'add','arguments':{'b':25}}]}")
                    .evaluate(
                            1L,
                            caseOf("q-1", "question", null),
                            o.output().orElseThrow(),
                            EvaluationContext.of(o, EvaluatorObserver.NONE))
                    .get(0);
            assertThat(r.status()).isEqualTo(EvaluatorResult.Status.PASSED);
        }
    }
}
