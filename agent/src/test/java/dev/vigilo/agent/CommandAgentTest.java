package dev.vigilo.agent;

import static dev.vigilo.agent.TestSupport.caseOf;
import static dev.vigilo.agent.TestSupport.env;
import static dev.vigilo.agent.TestSupport.shAgent;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.vigilo.common.errors.InvalidInputException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The command agent against real child processes (sh scripts written inline). */
class CommandAgentTest {
    @TempDir
    Path dir;

    private AgentOutcome run(ObjectNode config, CaseRecord c) {
        try (Agent agent = Agents.create(config, env(dir))) {
            return agent.run(AgentCall.of(c));
        }
    }

    private AgentOutcome run(String script) {
        return run(shAgent(script), caseOf("q-1", "What is 2 + 2?", "4"));
    }

    @Test
    void plainStdoutWithoutItsFinalNewlineIsTheOutput() {
        AgentOutcome o = run("printf 'four\\n'");
        assertThat(o.status()).isEqualTo(AgentOutcome.Status.OK);
        assertThat(o.output()).contains("four");
        assertThat(o.error()).isEmpty();
        assertThat(o.attempts()).hasSize(1);
        assertThat(o.attempts().get(0).error()).isEmpty();
        assertThat(run("printf 'a\\nb\\n\\n'").output()).contains("a\nb\n");
        assertThat(run("printf 'crlf\\r\\n'").output()).contains("crlf");
        assertThat(run("true").output()).contains("");
    }

    @Test
    void aJsonObjectWithOutputIsUnwrapped() {
        assertThat(run("printf '  {\"output\": \"4\", \"note\": \"x\"}\\n'").output())
                .contains("4");
        assertThat(run("printf '{\"output\": \"multi\\\\nline\"}'").output()).contains("multi\nline");
        // An object without "output", or several objects, is plain text.
        assertThat(run("printf '{\"answer\": 4}\\n'").output()).contains("{\"answer\": 4}");
        assertThat(run("printf '{\"output\": \"a\"} {\"output\": \"b\"}'").output())
                .contains("{\"output\": \"a\"} {\"output\": \"b\"}");
    }

    @Test
    void stdinIsTheCaseRecordByteForByte() {
        String line = "{\"id\":\"q-7\",\"input\":{\"question\":\"é ✓\"},  \"expected\":\"x\"}";
        AgentOutcome o = run(shAgent("cat"), caseOf("q-7", line));
        assertThat(o.output()).contains("{\"case\":" + line + "}");
    }

    @Test
    void theEnvironmentAndWorkingDirectoryAreTheWorkersPlusTheProfiles() throws Exception {
        ObjectNode config =
                shAgent("printf '%s|%s|%s|%s' \"$MODE\" \"$VIGILO_AGENT_PROTOCOL\" \"$VIGILO_ATTEMPT\" \"$(pwd -P)\"");
        ((ObjectNode) config.get("env")).put("MODE", "eval");
        AgentOutcome o = run(config, caseOf("q", "x", null));
        assertThat(o.output()).contains("eval|1|1|" + dir.toRealPath());
    }

    @Test
    void aNonStringOutputIsInvalidAndRetried() {
        AgentOutcome o = run("printf '{\"output\": 42}'");
        assertThat(o.status()).isEqualTo(AgentOutcome.Status.ERROR);
        assertThat(o.output()).isEmpty();
        AgentError e = o.error().orElseThrow();
        assertThat(e.type()).isEqualTo(AgentErrorType.INVALID_OUTPUT);
        assertThat(e.type().code()).isEqualTo("invalid_output");
        assertThat(e.message()).contains("\"output\" is number, not a string").contains("sh -c");
        assertThat(o.attempts()).hasSize(Agents.DEFAULT_MAX_ATTEMPTS);
    }

    @Test
    void invalidUtf8IsInvalidOutput() {
        AgentOutcome o = run("printf 'caf\\351\\n'");
        assertThat(o.error().orElseThrow().type()).isEqualTo(AgentErrorType.INVALID_OUTPUT);
        assertThat(o.error().get().message()).contains("not valid UTF-8");
    }

    @Test
    void aNonZeroExitIsAnErrorWithTheStderrTailAfterEveryAttempt() {
        ObjectNode config = shAgent("echo 'loading model' >&2; echo 'Traceback: boom' >&2; exit 3");
        config.put("max_attempts", 2);
        AgentOutcome o = run(config, caseOf("q", "x", null));
        AgentError e = o.error().orElseThrow();
        assertThat(e.type()).isEqualTo(AgentErrorType.NONZERO_EXIT);
        assertThat(e.message())
                .contains("exited with status 3")
                .contains("stderr ends: loading model Traceback: boom")
                .doesNotContain("\n");
        assertThat(o.attempts()).hasSize(2);
        assertThat(o.attempts())
                .allSatisfy(a -> assertThat(a.error().orElseThrow().type()).isEqualTo(AgentErrorType.NONZERO_EXIT));
        assertThat(o.attempts().get(1).number()).isEqualTo(2);
    }

    @Test
    void aTransientFailureIsRetriedAndTheSecondAttemptAnswers() throws Exception {
        Path marker = dir.resolve("tried");
        AgentOutcome o = run(
                shAgent("if [ -e '" + marker + "' ]; then printf ok; else touch '" + marker + "'; exit 1; fi"),
                caseOf("q", "x", null));
        assertThat(o.status()).isEqualTo(AgentOutcome.Status.OK);
        assertThat(o.output()).contains("ok");
        assertThat(o.attempts()).hasSize(2);
        assertThat(o.attempts().get(0).error().orElseThrow().type()).isEqualTo(AgentErrorType.NONZERO_EXIT);
        assertThat(o.attempts().get(1).error()).isEmpty();
    }

    @Test
    void aMissingProgramIsAgentNotFoundAndNotRetried() {
        AgentOutcome o = run(TestSupport.commandAgent("./no-such-agent", "--flag"), caseOf("q", "x", null));
        AgentError e = o.error().orElseThrow();
        assertThat(e.type()).isEqualTo(AgentErrorType.AGENT_NOT_FOUND);
        assertThat(e.message())
                .contains("\"./no-such-agent --flag\" cannot be started")
                .contains("No such file or directory")
                .contains("agent.command[0]");
        assertThat(o.attempts()).hasSize(1);
    }

    @Test
    void aProgramThatIsNotExecutableIsAgentNotFound() throws Exception {
        Path script = dir.resolve("agent.sh");
        Files.writeString(script, "#!/bin/sh\necho hi\n");
        AgentOutcome o = run(TestSupport.commandAgent(script.toString()), caseOf("q", "x", null));
        assertThat(o.error().orElseThrow().type()).isEqualTo(AgentErrorType.AGENT_NOT_FOUND);
        assertThat(o.error().get().message()).contains("Permission denied");
    }

    @Test
    void aTimeoutKillsTheProcessAndIsRetried() throws Exception {
        Path pids = dir.resolve("pids");
        ObjectNode config = shAgent("echo $$ >> '" + pids + "'; echo 'thinking' >&2; exec sleep 60");
        config.put("timeout_seconds", 1);
        config.put("max_attempts", 2);
        long start = System.nanoTime();
        AgentOutcome o = run(config, caseOf("q", "x", null));
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(20));
        AgentError e = o.error().orElseThrow();
        assertThat(e.type()).isEqualTo(AgentErrorType.TIMEOUT);
        assertThat(e.message()).contains("did not finish within 1 s").contains("thinking");
        assertThat(o.attempts()).hasSize(2);
        List<String> started = Files.readAllLines(pids);
        assertThat(started).hasSize(2);
        for (String pid : started) {
            assertGone(Long.parseLong(pid.strip()));
        }
    }

    @Test
    void aLeftoverProcessHoldingStdoutOpenCannotHoldTheAttemptPastItsTimeout() throws Exception {
        Path pid = dir.resolve("pid");
        ObjectNode config = shAgent("sleep 30 & echo $! > '" + pid + "'; printf answer");
        config.put("timeout_seconds", 1);
        config.put("max_attempts", 1);
        long start = System.nanoTime();
        AgentOutcome o = run(config, caseOf("q", "x", null));
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(10));
        // Whether the JDK sees the end of stdout when the agent exits depends on timing; either way the attempt
        // ends by its deadline, with the complete output or with a timeout that says what happened.
        if (o.status() == AgentOutcome.Status.OK) {
            assertThat(o.output()).contains("answer");
        } else {
            assertThat(o.error().orElseThrow().type()).isEqualTo(AgentErrorType.TIMEOUT);
            assertThat(o.error().get().message()).contains("still held its stdout open");
        }
        ProcessHandle.of(Long.parseLong(Files.readString(pid).strip())).ifPresent(ProcessHandle::destroyForcibly);
    }

    /**
     * An agent script that daemonizes a process the classic way (a subshell that starts it in a new session with
     * {@code setsid} and exits at once, so the process is out of the agent's process group and session and is no
     * longer its descendant), waits until that process wrote its pid to {@code pidFile}, then runs {@code then}.
     */
    private static String detachingAgent(Path pidFile, String then) {
        return "(setsid sh -c 'echo $$ > \"" + pidFile + ".tmp\"; mv \"" + pidFile + ".tmp\" \"" + pidFile
                + "\"; exec sleep 1000' </dev/null >/dev/null 2>&1 &)\n"
                + "while [ ! -s '" + pidFile + "' ]; do sleep 0.02; done\n" + then;
    }

    @Test
    void aProcessThatLeftTheSessionDiesWithTheAttemptThatAnswered() throws Exception {
        Path pid = dir.resolve("detached.pid");
        ObjectNode config = shAgent(detachingAgent(pid, "printf answer"));
        config.put("max_attempts", 1);
        AgentOutcome o = run(config, caseOf("q", "x", null));
        assertThat(o.status()).as(o.error().map(AgentError::message).orElse("")).isEqualTo(AgentOutcome.Status.OK);
        assertThat(o.output()).contains("answer");
        assertEnded(Long.parseLong(Files.readString(pid).strip()));
    }

    @Test
    void aProcessThatLeftTheSessionDiesWithAnAttemptThatTimedOut() throws Exception {
        Path pid = dir.resolve("detached.pid");
        ObjectNode config = shAgent(detachingAgent(pid, "exec sleep 60"));
        config.put("timeout_seconds", 2);
        config.put("max_attempts", 1);
        AgentOutcome o = run(config, caseOf("q", "x", null));
        assertThat(o.error().orElseThrow().type()).isEqualTo(AgentErrorType.TIMEOUT);
        assertEnded(Long.parseLong(Files.readString(pid).strip()));
    }

    @Test
    void anAlreadyInterruptedCallerStartsNothing() throws Exception {
        Path marker = dir.resolve("started");
        try (Agent agent = Agents.create(shAgent("touch '" + marker + "'"), env(dir))) {
            Thread.currentThread().interrupt();
            AgentOutcome o;
            try {
                o = agent.run(AgentCall.of(caseOf("q", "x", null)));
            } finally {
                assertThat(Thread.interrupted()).isTrue();
            }
            assertThat(o.cancelled()).isTrue();
            assertThat(o.attempts()).hasSize(1);
        }
        assertThat(marker).doesNotExist();
    }

    @Test
    void tooMuchStdoutIsCutOffAndNotRetried() {
        AgentOutcome o = run("head -c 3000000 /dev/zero | tr '\\0' 'x'");
        AgentError e = o.error().orElseThrow();
        assertThat(e.type()).isEqualTo(AgentErrorType.OUTPUT_TOO_LARGE);
        assertThat(e.message()).contains("more than 2 MiB");
        assertThat(o.attempts()).hasSize(1);
        // Under the stdout limit but over the output limit.
        AgentOutcome big = run("head -c 1500000 /dev/zero | tr '\\0' 'x'");
        assertThat(big.error().orElseThrow().type()).isEqualTo(AgentErrorType.OUTPUT_TOO_LARGE);
        assertThat(big.error().get().message()).contains("1500000 bytes").contains("at most 1 MiB");
        // Exactly 1 MiB is fine.
        assertThat(run("head -c 1048576 /dev/zero | tr '\\0' 'y'").output().orElseThrow())
                .hasSize(Agent.MAX_OUTPUT_BYTES);
    }

    @Test
    void stderrIsReadInBoundedMemoryAndOnlyItsTailReported() {
        AgentOutcome o = run("head -c 50000000 /dev/zero | tr '\\0' 'e' >&2; echo ' the end' >&2; exit 1");
        String m = o.error().orElseThrow().message();
        assertThat(m).endsWith("eee the end").hasSizeLessThan(1000);
    }

    @Test
    void anAgentThatIgnoresALargeStdinStillAnswers() {
        String big = "{\"id\":\"big\",\"input\":\"" + "z".repeat(4 << 20) + "\"}";
        AgentOutcome o = run(shAgent("printf done"), caseOf("big", big));
        assertThat(o.output()).contains("done");
        AgentOutcome counted = run(shAgent("wc -c | tr -d ' '"), caseOf("big", big));
        assertThat(counted.output()).contains(Integer.toString(big.length() + "{\"case\":}\n".length()));
    }

    @Test
    void eventLinesReachTheObserverAndTheFileIsRemoved() throws Exception {
        List<String> seen = new CopyOnWriteArrayList<>();
        List<String> events = new CopyOnWriteArrayList<>();
        AgentObserver observer = new AgentObserver() {
            @Override
            public void onAttemptStart(int attempt) {
                seen.add("start " + attempt);
            }

            @Override
            public void onEvent(int attempt, JsonNode event) {
                events.add(attempt + " " + event);
            }

            @Override
            public void onAttemptEnd(AgentAttempt attempt) {
                seen.add("end " + attempt.number() + " "
                        + attempt.error().map(e -> e.type().code()).orElse("ok"));
            }
        };
        String script = "echo \"$VIGILO_EVENTS\" > '" + dir.resolve("where") + "';"
                + " printf '{\"type\":\"tool\",\"name\":\"calc\"}\\nnot json\\n[1]\\n\\n{\"type\":\"thought\"}\\n'"
                + " >> \"$VIGILO_EVENTS\"; printf 42";
        try (Agent agent = Agents.create(shAgent(script), env(dir))) {
            AgentOutcome o = agent.run(new AgentCall(caseOf("q", "x", null), observer));
            assertThat(o.output()).contains("42");
        }
        assertThat(events).containsExactly("1 {\"type\":\"tool\",\"name\":\"calc\"}", "1 {\"type\":\"thought\"}");
        assertThat(seen).containsExactly("start 1", "end 1 ok");
        Path eventsFile = Path.of(Files.readString(dir.resolve("where")).strip());
        assertThat(eventsFile.getParent()).isEqualTo(dir);
        assertThat(eventsFile).doesNotExist();
    }

    @Test
    void eventsAreBounded() {
        List<JsonNode> events = new CopyOnWriteArrayList<>();
        AgentObserver observer = new AgentObserver() {
            @Override
            public void onEvent(int attempt, JsonNode event) {
                events.add(event);
            }
        };
        String script = "i=0; while [ $i -lt 10100 ]; do echo '{\"n\":1}'; i=$((i+1)); done > \"$VIGILO_EVENTS\";"
                + " printf ok";
        try (Agent agent = Agents.create(shAgent(script), env(dir))) {
            assertThat(agent.run(new AgentCall(caseOf("q", "x", null), observer))
                            .output())
                    .contains("ok");
        }
        assertThat(events).hasSize(CommandAgent.EventsFile.MAX_EVENTS);
    }

    @Test
    void interruptingTheCallerKillsTheWholeProcessTree() throws Exception {
        Path pids = dir.resolve("pids");
        String script = "sleep 120 & echo $! > '" + pids + ".tmp'; echo $$ >> '" + pids + ".tmp'; mv '" + pids
                + ".tmp' '" + pids + "'; wait";
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try (Agent agent = Agents.create(shAgent(script), env(dir))) {
            Future<AgentOutcome> f = pool.submit(() -> {
                AgentOutcome o = agent.run(AgentCall.of(caseOf("q", "x", null)));
                assertThat(Thread.currentThread().isInterrupted())
                        .as("interrupt status kept")
                        .isTrue();
                return o;
            });
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (!Files.exists(pids) && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            List<String> started = Files.readAllLines(pids);
            assertThat(started).hasSize(2);
            for (String pid : started) {
                assertThat(ProcessHandle.of(Long.parseLong(pid.strip())).map(ProcessHandle::isAlive))
                        .contains(true);
            }
            long interruptedAt = System.nanoTime();
            pool.shutdownNow(); // interrupts the running call
            AgentOutcome o = f.get(20, TimeUnit.SECONDS);
            assertThat(Duration.ofNanos(System.nanoTime() - interruptedAt)).isLessThan(Duration.ofSeconds(10));
            assertThat(o.cancelled()).isTrue();
            assertThat(o.error().orElseThrow().type()).isEqualTo(AgentErrorType.CANCELLED);
            assertThat(o.attempts()).hasSize(1);
            for (String pid : started) {
                assertGone(Long.parseLong(pid.strip()));
            }
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void oneAgentServesConcurrentCases() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try (Agent agent = Agents.create(shAgent("sed 's/.*\"id\":\"\\([^\"]*\\)\".*/answer-\\1/'"), env(dir))) {
            List<Future<AgentOutcome>> futures = new ArrayList<>();
            for (int i = 0; i < 32; i++) {
                CaseRecord c = caseOf("c" + i, "x", null);
                futures.add(pool.submit(() -> agent.run(AgentCall.of(c))));
            }
            for (int i = 0; i < 32; i++) {
                assertThat(futures.get(i).get(60, TimeUnit.SECONDS).output()).contains("answer-c" + i);
            }
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void badConfigurationsNameTheKey() {
        ObjectNode noCommand = shAgent("x");
        noCommand.remove("command");
        assertThatThrownBy(() -> Agents.create(noCommand, env(dir)))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("agent.command: must be a non-empty list");
        ObjectNode attempts = shAgent("x");
        attempts.put("max_attempts", 11);
        assertThatThrownBy(() -> Agents.create(attempts, env(dir)))
                .hasMessageContaining("agent.max_attempts: must be an integer in [1, 10], got 11");
        ObjectNode kind = shAgent("x");
        kind.put("kind", "rpc");
        assertThatThrownBy(() -> Agents.create(kind, env(dir)))
                .hasMessageContaining("agent.kind: unknown agent kind \"rpc\"");
        assertThatThrownBy(() -> Agents.create(TestSupport.q("[1]"), env(dir)))
                .hasMessageContaining("agent: must be an object");
    }

    @Test
    void stdinFramingIsDocumented() {
        assertThat(new String(
                        CommandAgent.stdin("{\"id\":\"a\"}".getBytes(StandardCharsets.UTF_8)), StandardCharsets.UTF_8))
                .isEqualTo("{\"case\":{\"id\":\"a\"}}\n");
    }

    /**
     * Waits (at most 10 s) until {@code pid} has ended: gone, or a zombie (dead, waiting only for whoever adopted it
     * to collect its status, which in a container may never happen).
     */
    static void assertEnded(long pid) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!ended(pid) && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertThat(ended(pid)).as("process %d has ended", pid).isTrue();
    }

    private static boolean ended(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
            return stat.charAt(stat.lastIndexOf(')') + 2) == 'Z';
        } catch (java.io.IOException e) {
            return true;
        }
    }

    static void assertGone(long pid) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false) && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertThat(ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false))
                .as("process %d is gone", pid)
                .isFalse();
    }
}
