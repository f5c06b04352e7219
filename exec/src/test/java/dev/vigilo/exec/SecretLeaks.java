package dev.vigilo.exec;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.vigilo.agent.AgentEnvironment;
import dev.vigilo.agent.OpenAiTestServer;
import dev.vigilo.exec.worker.Worker;
import dev.vigilo.storage.StorageConfig;
import java.io.IOException;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Agents, evaluators and an endpoint that give an API key back through every path they have, for the tests that
 * check no stored byte of a run holds it (exec, web, cli). The key is in the worker's environment as {@link #VARIABLE}
 * and named by the run's {@code api_key_env}; it holds {@code /} and {@code +}, so its JSON-escaped ({@code \/}) and
 * URL-encoded ({@code %2F}, {@code %2B}) spellings differ from it.
 *
 * <p>Cases are {@code "what is N * 2"} (see {@link ExecFixture#writeCases}). The endpoint ({@link #echoingEndpoint})
 * answers case 0 with 401 and the Authorization header in a JSON body; case 1 with 503 and it in a body that is not
 * JSON, then 200 with it in the content; case 2 with 502 and its JSON-escaped spelling in a cut body, then 400 with
 * its URL-encoded spelling; case 3 with a tool call whose arguments hold it; every answer carries it in a response
 * header. The command agent ({@link #AGENT}) prints it on stderr, in its events (message, tool call and result, an
 * unknown event's field name) and in its output (case 3: an output stored apart), fails case 1's first attempt and
 * every attempt of case 2, and cuts case 5's stderr tail inside the key. The command evaluator ({@link #EVALUATOR})
 * prints it on stdout instead of a score (cases 0 and 4) or on stderr and crashes.
 */
public final class SecretLeaks {
    /** The variable holding the key in the worker's environment. */
    public static final String VARIABLE = "VIGILO_TEST_API_KEY";

    /** Prints the key everywhere a command agent can (docs/formats/agent-protocol.md). */
    public static final String AGENT = """
            #!/bin/sh
            input=$(cat)
            n=$(printf '%s' "$input" | sed -n 's/.*what is \\([0-9]*\\) \\* 2.*/\\1/p')
            {
              printf '%s\\n' '{"type":"message","text":"I will call the API with '"$VIGILO_TEST_API_KEY"'"}'
              printf '%s\\n' '{"type":"tool_call","id":"c1","name":"auth","arguments":{"key":"'"$VIGILO_TEST_API_KEY"'"}}'
              printf '%s\\n' '{"type":"tool_result","id":"c1","content":"accepted '"$VIGILO_TEST_API_KEY"'"}'
              printf '%s\\n' '{"type":"custom","'"$VIGILO_TEST_API_KEY"'":"as a field name"}'
            } >> "$VIGILO_EVENTS"
            if [ "$n" = 5 ]; then
              # stderr longer than the kept tail, cut inside the key, then only blanks and a word
              printf '%s' "$VIGILO_TEST_API_KEY" >&2
              head -c 2015 /dev/zero | tr '\\0' ' ' >&2
              printf 'end' >&2
              exit 5
            fi
            echo "agent stderr holds $VIGILO_TEST_API_KEY" >&2
            if [ "$n" = 1 ] && [ "$VIGILO_ATTEMPT" = 1 ]; then exit 3; fi
            if [ "$n" = 2 ]; then exit 4; fi
            if [ "$n" = 3 ]; then
              head -c 70000 /dev/zero | tr '\\0' 'a'
              printf ' %s ' "$VIGILO_TEST_API_KEY"
              head -c 1000 /dev/zero | tr '\\0' 'b'
              echo
              exit 0
            fi
            printf 'answer %s\\n' "$VIGILO_TEST_API_KEY"
            """;

    /** A command evaluator that prints the key instead of a score, or on stderr before it crashes. */
    public static final String EVALUATOR = """
            #!/bin/sh
            input=$(cat)
            case "$input" in
              *'"id":"case-0"'*|*'"id":"case-4"'*) printf '%s\\n' "$VIGILO_TEST_API_KEY" ;;
              *) printf 'evaluator saw %s\\n' "$VIGILO_TEST_API_KEY" >&2; exit 1 ;;
            esac
            """;

    private static final Pattern QUESTION = Pattern.compile("what is (\\d+) \\* 2");
    private static final ObjectMapper JSON = new ObjectMapper();

    private SecretLeaks() {}

    /** A fresh key: {@code sk-test-<32 random hex>/+Qz}. */
    public static String newKey() {
        byte[] b = new byte[16];
        ThreadLocalRandom.current().nextBytes(b);
        return "sk-test-" + HexFormat.of().formatHex(b) + "/+Qz";
    }

    /** The key's URL-encoded spelling. */
    public static String urlEncoded(String key) {
        return URLEncoder.encode(key, StandardCharsets.UTF_8);
    }

    /** The key's JSON-escaped spelling with {@code /} as {@code \/}. */
    public static String jsonEscaped(String key) {
        return key.replace("/", "\\/");
    }

    /** Writes {@link #AGENT} and {@link #EVALUATOR} as executables into {@code dir}: {agent, evaluator}. */
    public static Path[] scripts(Path dir) throws IOException {
        Path agent = dir.resolve("leaky-agent.sh");
        Path evaluator = dir.resolve("leaky-evaluator.sh");
        Files.writeString(agent, AGENT);
        Files.writeString(evaluator, EVALUATOR);
        for (Path p : new Path[] {agent, evaluator}) {
            Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("rwxr-xr-x"));
        }
        return new Path[] {agent, evaluator};
    }

    /** An http agent run against {@code endpoint}, its key named by api_key_env, judged by {@code evaluator}. */
    public static String httpProfile(OpenAiTestServer endpoint, Path evaluator) {
        return """
                name: leaky-http
                agent: {kind: http, url: "%s", model: test-model, api_key_env: %s, max_attempts: 2}
                evaluators:
                  - {name: exact, kind: exact_match}
                  - {name: leaky, kind: command, command: ["%s"]}
                gates:
                  - {name: all, required_evaluators: [exact], min_pass_rate: 0.1}
                """.formatted(endpoint.chatUrl(), VARIABLE, evaluator);
    }

    /** A command agent run whose agent declares the key it uses (api_key_env), judged by {@code evaluator}. */
    public static String commandProfile(Path agent, Path evaluator) {
        return """
                name: leaky-command
                agent: {kind: command, command: ["%s"], api_key_env: %s, max_attempts: 2}
                evaluators:
                  - {name: exact, kind: exact_match}
                  - {name: leaky, kind: command, command: ["%s"]}
                gates:
                  - {name: all, required_evaluators: [exact], min_pass_rate: 0.1}
                """.formatted(agent, VARIABLE, evaluator);
    }

    /** This process's environment plus the key, without waits between attempts. */
    public static AgentEnvironment environment(String key) {
        Map<String, String> variables = new HashMap<>(System.getenv());
        variables.put(VARIABLE, key);
        return AgentEnvironment.system()
                .withVariables(variables)
                .withBackoff(Duration.ZERO, Duration.ZERO, Duration.ZERO);
    }

    /** A real worker with {@link #environment}: the key in its environment, no waits between attempts. */
    public static Worker worker(Placements placements, StorageConfig storage, Worker.Options options, String key) {
        return new Worker(placements, storage, options, Worker.Listener.NONE, environment(key));
    }

    /** Makes {@code server} answer as described above, echoing the request's Authorization header. */
    public static void echoingEndpoint(OpenAiTestServer server) {
        Map<Long, AtomicInteger> calls = new ConcurrentHashMap<>();
        server.answerWith(req -> {
            String auth = req.authorization() == null ? "" : req.authorization();
            String key = auth.startsWith("Bearer ") ? auth.substring(7) : auth;
            Matcher m = QUESTION.matcher(req.lastUserMessage() == null ? "" : req.lastUserMessage());
            long n = m.find() ? Long.parseLong(m.group(1)) : -1;
            int call = calls.computeIfAbsent(n, k -> new AtomicInteger()).incrementAndGet();
            OpenAiTestServer.Reply reply;
            if (n == 0) {
                reply = json(401, JSON.createObjectNode().put("error", "bad key " + auth));
            } else if (n == 1 && call == 1) {
                reply = OpenAiTestServer.Reply.raw(503, "upstream failed for Authorization: " + auth + "; retry");
            } else if (n == 1) {
                reply = OpenAiTestServer.Reply.content("your key is " + key);
            } else if (n == 2 && call == 1) {
                reply = OpenAiTestServer.Reply.raw(502, "{\"echo\":\"" + jsonEscaped(key) + "\", \"cut");
            } else if (n == 2) {
                reply = OpenAiTestServer.Reply.error(400, "invalid api_key=" + urlEncoded(key) + "&model=test-model");
            } else if (n == 3) {
                reply = OpenAiTestServer.Reply.toolCall("lookup", "{\"api_key\":\"" + key + "\"}");
            } else {
                reply = OpenAiTestServer.Reply.content(Long.toString(n * 2));
            }
            return reply.withHeader("X-Echo-Authorization", auth);
        });
    }

    private static OpenAiTestServer.Reply json(int status, Object body) {
        try {
            return new OpenAiTestServer.Reply(
                    status, JSON.writeValueAsBytes(body), Map.of("Content-Type", "application/json"), Duration.ZERO, 0);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }
}
