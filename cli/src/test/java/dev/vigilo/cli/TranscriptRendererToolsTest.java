package dev.vigilo.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@code run transcript} shows an http agent's tool loop as a conversation: each model call a step, its tool calls
 * with their arguments, each result (an error marked), the usage of every model call.
 */
class TranscriptRendererToolsTest {
    static final ObjectMapper MAPPER = new ObjectMapper();

    static JsonNode q(String singleQuoted) throws Exception {
        return MAPPER.readTree(singleQuoted.replace('\'', '"'));
    }

    @Test
    void aToolLoopIsShownStepByStep() throws Exception {
        List<JsonNode> events = List.of(
                q("{'type':'turn/start','data':{'turn':1}}"),
                q("{'type':'user/message','data':{'id':'u','role':'user','source':{'kind':'user'},"
                        + "'content':[{'type':'text','text':'What is 17 * 2?'}]}}"),
                q("{'type':'step/start','data':{'turn':1,'step':1}}"),
                q("{'type':'assistant/message','data':{'turn':1,'step':1,'message':{'id':'a1','role':'assistant',"
                        + "'source':{'kind':'model','provider':'openai-compatible','model':'m'},'content':["
                        + "{'type':'tool-call','id':'c1','name':'multiply','arguments':'{\\'a\\':17}'}]},"
                        + "'usage':{'inputTokens':10,'outputTokens':3}}}"),
                q("{'type':'tool/call','data':{'turn':1,'step':1,'callId':'c1','name':'multiply','arguments':'{}'}}"),
                q("{'type':'tool/result','data':{'turn':1,'step':1,'message':{'id':'t1','role':'user',"
                        + "'source':{'kind':'tool','callId':'c1'},'content':[{'type':'tool-result','toolCallId':'c1',"
                        + "'content':[{'type':'text','text':'the arguments of tool multiply do not match'}],"
                        + "'isError':true}]}}}"),
                q("{'type':'step/end','data':{'turn':1,'step':1}}"),
                q("{'type':'step/start','data':{'turn':1,'step':2}}"),
                q("{'type':'assistant/message','data':{'turn':1,'step':2,'message':{'id':'a2','role':'assistant',"
                        + "'source':{'kind':'model','provider':'openai-compatible','model':'m'},'content':["
                        + "{'type':'text','text':'34'}]},'usage':{'inputTokens':20,'outputTokens':1}}}"),
                q("{'type':'step/end','data':{'turn':1,'step':2}}"));
        StringWriter text = new StringWriter();
        try (PrintWriter out = new PrintWriter(text)) {
            TranscriptRenderer r = new TranscriptRenderer(out);
            events.forEach(r::render);
        }
        String shown = text.toString();
        assertThat(shown)
                .containsSubsequence(
                        "── step 1",
                        "assistant (m) calls multiply [c1]",
                        "usage: 10 input, 3 output tokens",
                        "tool result [c1] (error)",
                        "the arguments of tool multiply do not match",
                        "── step 2",
                        "34",
                        "usage: 20 input, 1 output tokens");
    }
}
