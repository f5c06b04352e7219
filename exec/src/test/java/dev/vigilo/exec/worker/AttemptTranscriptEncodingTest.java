package dev.vigilo.exec.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.vigilo.agent.AgentAttempt;
import dev.vigilo.agent.AgentError;
import dev.vigilo.agent.AgentErrorType;
import dev.vigilo.exec.record.TranscriptStore;
import dev.vigilo.sessionlog.SessionHeader;
import dev.vigilo.sessionlog.SessionLogEncoder;
import dev.vigilo.sessionlog.SessionVerifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The worker encodes an attempt's events as they are recorded (a flush after every recorder callback into the
 * transcript's encoder) and must give the bytes of the earlier path, which kept every event as a tree until the
 * attempt ended and then encoded them in batches of {@link TranscriptStore#BATCH_EVENTS}: the same attempt goes both
 * ways at once (each flushed event is copied, as recorded, for the old path) and the two logs are compared byte for
 * byte; each also verifies.
 */
class AttemptTranscriptEncodingTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final SessionHeader HEADER = new SessionHeader("vigilo-run-x-chunk-0-case-3-a1-g7", null, 1_700, 0);

    @TempDir
    Path dir;

    /** Both paths of one attempt: the events as trees (old) and the encoder fed at each flush (new). */
    private static final class Both {
        final List<ObjectNode> trees = new ArrayList<>();
        final SessionLogEncoder log = TranscriptStore.encoder(HEADER, 7);
        final AttemptTranscript t;

        Both(String provider) {
            Consumer<List<ObjectNode>> sink = events -> {
                for (ObjectNode e : events) {
                    trees.add(e.deepCopy());
                }
                log.add(events);
            };
            ObjectNode c = JSON.createObjectNode()
                    .put("v", AttemptTranscript.VERSION)
                    .put("run_id", "x")
                    .put("chunk_index", 0)
                    .put("case_id", "case-3")
                    .put("ordinal", 3)
                    .put("case_sha256", "0".repeat(64))
                    .put("attempt", 1)
                    .put("lease_generation", 7);
            t = new AttemptTranscript(1, c, "What is 2 + 2? \u00e9 \ud83d\ude00", provider, "test-model", sink);
            t.flush();
        }

        /** One recorder callback: the work, then the flush. */
        Both on(Consumer<AttemptTranscript> work) {
            work.accept(t);
            t.flush();
            return this;
        }

        /** The case's end as {@code TranscriptRecorder.finish} records it: one burst, judges and evaluators. */
        Both finish(String output) {
            t.output(output, output.length(), "a".repeat(64));
            ObjectNode req = JSON.createObjectNode()
                    .put("evaluator", 0)
                    .put("name", "judge")
                    .put("attempt", 1);
            req.set("request", json("{'model':'judge-model','messages':[{'role':'user','content':'grade 4'}]}"));
            t.judge(AttemptTranscript.JUDGE_REQUEST, req);
            ObjectNode res = JSON.createObjectNode()
                    .put("evaluator", 0)
                    .put("name", "judge")
                    .put("attempt", 1)
                    .put("status", 200)
                    .put("ms", 12);
            res.set("response", json("{'choices':[{'message':{'role':'assistant','content':'PASS'}}]}"));
            t.judge(AttemptTranscript.JUDGE_RESPONSE, res);
            t.evaluator("judge", true, 1.0, "it says 4", null, null, 12);
            t.evaluator("exact", false, 0.25, null, "evaluator_error", "no \"answer\" field", 1);
            t.gates(false, Map.of("all", "passed"));
            t.flush();
            return this;
        }

        void assertSameBytes(Path dir, String name) throws Exception {
            byte[] streamed = log.toByteArray();
            byte[] old = TranscriptStore.encode(HEADER, 7, trees);
            assertThat(streamed).as(name + ": %d events", trees.size()).isEqualTo(old);
            Path f = dir.resolve(name + ".jsonl.zstd");
            Files.write(f, streamed);
            assertThat(SessionVerifier.verify(f).maxEpoch()).isEqualTo(7);
        }
    }

    static JsonNode json(String singleQuoted) {
        try {
            return JSON.readTree(singleQuoted.replace('\'', '"'));
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    private static AgentAttempt ok() {
        return new AgentAttempt(1, Instant.parse("2026-12-03T10:00:00Z"), Duration.ofMillis(2_000), Optional.empty());
    }

    @Test
    void aPlainHttpAttempt() throws Exception {
        new Both(AttemptTranscript.HTTP_PROVIDER)
                .on(
                        t -> t.request(
                                json(
                                        "{'model':'m','temperature':0.2,'max_tokens':64,'messages':[{'role':"
                                                + "'system','content':'Be brief.'},{'role':'user','content':'What is 2 + 2? \u00e9 \ud83d\ude00'}]}")))
                .on(t -> t.response(
                        200,
                        json("{'model':'m-2026','choices':[{'message':{'role':'assistant','content':'4',"
                                + "'reasoning_content':'2 and 2'}}],'usage':{'prompt_tokens':12,"
                                + "'completion_tokens':3,'prompt_tokens_details':{'cached_tokens':4},"
                                + "'completion_tokens_details':{'reasoning_tokens':2}}}")))
                .on(t -> t.end(ok()))
                .finish("4")
                .assertSameBytes(dir, "plain");
    }

    @Test
    void anHttpAgentWithToolsAndATemplate() throws Exception {
        String request = "{'model':'m','messages':[{'role':'system','content':'Use tools.'},{'role':'user',"
                + "'content':'Q: What is 2 + 2?'}],'tools':[{'type':'function','function':{'name':'add',"
                + "'parameters':{'type':'object'}}}]}";
        new Both(AttemptTranscript.HTTP_PROVIDER)
                .on(t -> t.request(json(request)))
                .on(t -> t.response(
                        200,
                        json("{'choices':[{'message':{'role':'assistant','content':null,'tool_calls':["
                                + "{'id':'c1','type':'function','function':{'name':'add','arguments':'{\\'a\\':2}'}},"
                                + "{'type':'function','function':{'name':'add','arguments':{'b':2}}}]}}]}")))
                .on(t -> t.toolResult("c1", "4", false))
                .on(t -> t.toolResult("call_1_2", "no such tool </script> \u2028", true))
                .on(t -> t.request(json(request)))
                .on(t -> t.response(
                        200,
                        json("{'choices':[{'message':{'role':'assistant','content':[{'type':'text','text':'4'}]}}]}")))
                .on(t -> t.end(ok()))
                .finish("4")
                .assertSameBytes(dir, "tools");
    }

    @Test
    void aCommandAgentWithItsOwnEvents() throws Exception {
        new Both(AttemptTranscript.COMMAND_PROVIDER)
                .on(t -> t.agentEvent(json("{'type':'reasoning','text':'think','time':1700000000001}")))
                .on(t -> t.agentEvent(json("{'type':'tool_call','id':'t1','name':'sh','arguments':{'cmd':'ls'},"
                        + "'model':'cmd-model'}")))
                .on(t -> t.agentEvent(
                        json("{'type':'tool_result','id':'t1','content':{'files':[1,2]}," + "'is_error':false}")))
                .on(t -> t.agentEvent(json("{'type':'usage','input_tokens':10,'output_tokens':5,"
                        + "'reasoning_tokens':1,'cache_read_tokens':2}")))
                .on(t -> t.agentEvent(json("{'type':'message','role':'assistant','text':'done'}")))
                .on(t -> t.agentEvent(json("{'type':'message','role':'user','text':'and now?'}")))
                .on(t -> t.agentEvent(json("{'type':'progress','percent':50,'time':-3}")))
                .on(t -> t.agentEvent(json("{'type':'message','role':'assistant','text':'all done'}")))
                .on(t -> t.end(ok()))
                .finish("all done")
                .assertSameBytes(dir, "command");
    }

    @Test
    void errorsCacheAndLimits() throws Exception {
        new Both(AttemptTranscript.HTTP_PROVIDER)
                .on(t -> t.request(json("{'model':'m','messages':[{'role':'user','content':'x'}]}")))
                .on(t -> t.response(500, json("{'error':{'message':'overloaded'}}")))
                .on(t -> t.end(new AgentAttempt(
                        1,
                        Instant.parse("2026-12-03T10:00:00Z"),
                        Duration.ofMillis(31),
                        Optional.of(AgentError.of(AgentErrorType.HTTP_STATUS, "status 500 \"overloaded\"")))))
                .on(t -> t.gates(true, Map.of("all", "errored")))
                .assertSameBytes(dir, "error");
        Both cached = new Both(AttemptTranscript.HTTP_PROVIDER).on(t -> t.cachedAnswer("k".repeat(64)));
        cached.t.output("4", 1, "b".repeat(64));
        cached.t.evaluator("exact", true, 1.0, null, null, null, 0);
        cached.t.limitExceeded("cost limit 0.01 USD exceeded: 0.02 USD");
        cached.t.gates(true, Map.of("all", "errored", "strict", "failed"));
        cached.t.flush();
        cached.assertSameBytes(dir, "cached");
    }

    @Test
    void aLongAttemptAcrossBatches() throws Exception {
        // 150 model calls with a tool each: about 900 events, flushed in bursts that straddle the 256-event batches
        Both b = new Both(AttemptTranscript.HTTP_PROVIDER);
        for (int k = 1; k <= 150; k++) {
            int n = k;
            b.on(t -> t.request(json("{'model':'m','messages':[{'role':'user','content':'x'}]}")))
                    .on(t -> t.response(
                            200,
                            json("{'choices':[{'message':{'role':'assistant','tool_calls':[{'id':'c" + n
                                    + "','type':'function','function':{'name':'f','arguments':'{}'}}]}}]}")))
                    .on(t -> t.toolResult("c" + n, "value " + n, false));
        }
        b.on(t -> t.request(json("{'model':'m','messages':[{'role':'user','content':'x'}]}")))
                .on(t -> t.response(200, json("{'choices':[{'message':{'role':'assistant','content':'42'}}]}")))
                .on(t -> t.end(ok()))
                .finish("42");
        assertThat(b.trees).hasSizeGreaterThan(3 * TranscriptStore.BATCH_EVENTS);
        b.assertSameBytes(dir, "long");
    }

    @Test
    void withASinkTheEventsAreNotKept() {
        List<ObjectNode> seen = new ArrayList<>();
        AttemptTranscript t = new AttemptTranscript(
                1, JSON.createObjectNode(), "x", AttemptTranscript.HTTP_PROVIDER, "m", seen::addAll);
        t.flush();
        assertThat(seen)
                .extracting(e -> e.get("type").asText())
                .containsExactly("vigilo/case", "turn/start", "user/message");
        assertThatThrownBy(t::events).isInstanceOf(IllegalStateException.class);
    }
}
