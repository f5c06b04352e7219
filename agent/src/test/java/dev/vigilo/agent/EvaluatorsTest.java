package dev.vigilo.agent;

import static dev.vigilo.agent.TestSupport.caseOf;
import static dev.vigilo.agent.TestSupport.env;
import static dev.vigilo.agent.TestSupport.q;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.vigilo.common.errors.InvalidInputException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class EvaluatorsTest {
    @TempDir
    Path dir;

    /** An evaluator plan of these entries (index filled in). */
    EvaluatorSet plan(String... singleQuotedEntries) {
        ArrayNode plan = TestSupport.MAPPER.createArrayNode();
        for (int i = 0; i < singleQuotedEntries.length; i++) {
            ObjectNode e = (ObjectNode) q(singleQuotedEntries[i]);
            e.put("index", i);
            e.put("applies_to_cases", 1);
            plan.add(e);
        }
        return Evaluators.fromPlan(plan, env(dir));
    }

    EvaluatorResult one(String entry, CaseRecord c, String output) {
        return plan(entry).evaluate(0, c, output);
    }

    static CaseRecord expecting(Object expected) {
        return caseOf("q-1", "question", expected);
    }

    @Test
    void exactMatchTrimsAndFoldsCaseByDefaultOnlyWhenAsked() {
        String exact = "{'name':'exact','kind':'exact_match','case_sensitive':true,'trim':true}";
        assertThat(one(exact, expecting("Paris"), "  Paris\n").passed()).isTrue();
        assertThat(one(exact, expecting("Paris"), "paris").passed()).isFalse();
        assertThat(one(exact, expecting(" Paris "), "Paris").passed()).isTrue();
        String strict = "{'name':'exact','kind':'exact_match','case_sensitive':true,'trim':false}";
        assertThat(one(strict, expecting("Paris"), "Paris\n").passed()).isFalse();
        String loose = "{'name':'exact','kind':'exact_match','case_sensitive':false,'trim':true}";
        assertThat(one(loose, expecting("PARIS"), "paris ").passed()).isTrue();
        EvaluatorResult r = one(exact, expecting("Paris"), "Lyon");
        assertThat(r.status()).isEqualTo(EvaluatorResult.Status.FAILED);
        assertThat(r.score()).isZero();
        assertThat(r.index()).isZero();
        assertThat(r.name()).isEqualTo("exact");
        assertThat(one(exact, expecting("Paris"), "Paris").score()).isEqualTo(1.0);
    }

    @Test
    void aNonStringExpectedIsComparedAsCompactJson() {
        String exact = "{'name':'exact','kind':'exact_match'}";
        assertThat(one(exact, expecting(42), "42").passed()).isTrue();
        assertThat(one(exact, expecting(true), "true").passed()).isTrue();
        assertThat(one(
                                exact,
                                caseOf("q", "{\"id\":\"q\",\"input\":1,\"expected\":{\"b\": 1, \"a\": [1, 2]}}"),
                                "{\"b\":1,\"a\":[1,2]}")
                        .passed())
                .isTrue();
    }

    @Test
    void aMissingExpectedIsAnEvaluatorError() {
        for (String entry : List.of(
                "{'name':'exact','kind':'exact_match'}",
                "{'name':'has','kind':'contains'}",
                "{'name':'re','kind':'regex'}")) {
            EvaluatorResult r = one(entry, expecting(null), "anything");
            assertThat(r.status()).isEqualTo(EvaluatorResult.Status.ERROR);
            assertThat(r.error().orElseThrow().type()).isEqualTo(EvaluatorErrorType.MISSING_EXPECTED);
            assertThat(r.error().get().message()).contains("case \"q-1\" has none");
            assertThat(r.score()).isZero();
        }
        EvaluatorResult nullExpected = one(
                "{'name':'exact','kind':'exact_match'}",
                caseOf("q", "{\"id\":\"q\",\"input\":1,\"expected\":null}"),
                "x");
        assertThat(nullExpected.error().orElseThrow().type()).isEqualTo(EvaluatorErrorType.MISSING_EXPECTED);
    }

    @Test
    void containsLooksForExpectedAnywhere() {
        String has = "{'name':'has','kind':'contains','case_sensitive':false}";
        assertThat(one(has, expecting("Ottawa"), "The capital of Canada is OTTAWA.")
                        .passed())
                .isTrue();
        assertThat(one(has, expecting("Ottawa"), "Toronto").passed()).isFalse();
        String sensitive = "{'name':'has','kind':'contains'}";
        assertThat(one(sensitive, expecting("Ottawa"), "ottawa").passed()).isFalse();
    }

    @Test
    void regexFindsThePatternAnywhereAndAnchorsAreTheWholeOutput() {
        String digits = "{'name':'re','kind':'regex','pattern':'\\\\d+'}";
        assertThat(one(digits, expecting(null), "the answer is 42.").passed()).isTrue();
        assertThat(one(digits, expecting(null), "forty-two").passed()).isFalse();
        String anchored = "{'name':'re','kind':'regex','pattern':'^-?[0-9]+$'}";
        assertThat(one(anchored, expecting(null), "42").passed()).isTrue();
        assertThat(one(anchored, expecting(null), "42\n").passed())
                .as("$ is the end of the text, not before a final newline")
                .isFalse();
        assertThat(one(anchored, expecting(null), "x\n42").passed()).isFalse();
        String multiline = "{'name':'re','kind':'regex','pattern':'(?m)^42$'}";
        assertThat(one(multiline, expecting(null), "x\n42\ny").passed()).isTrue();
    }

    @Test
    void withoutAPatternTheCasesExpectedIsThePattern() {
        String re = "{'name':'re','kind':'regex'}";
        assertThat(one(re, expecting("^Par.s$"), "Paris").passed()).isTrue();
        assertThat(one(re, expecting("^Par.s$"), "Lyon").passed()).isFalse();
        EvaluatorResult bad = one(re, expecting("(?<=x)y"), "xy");
        assertThat(bad.error().orElseThrow().type()).isEqualTo(EvaluatorErrorType.INVALID_PATTERN);
        assertThat(bad.error().get().message())
                .contains("evaluator \"re\": expected of case \"q-1\": invalid regular expression");
        EvaluatorResult huge = one(re, expecting("((a{1000}){1000}){1000}"), "a");
        assertThat(huge.error().orElseThrow().type()).isEqualTo(EvaluatorErrorType.INVALID_PATTERN);
        assertThat(huge.error().get().message()).contains("too large");
        EvaluatorResult number = one(re, expecting(42), "42");
        assertThat(number.error().orElseThrow().type()).isEqualTo(EvaluatorErrorType.INVALID_PATTERN);
        assertThat(number.error().get().message()).contains("has a number there, not a string");
    }

    @Test
    void aCatastrophicBacktrackingPatternRunsInLinearTime() {
        EvaluatorSet set = plan("{'name':'re','kind':'regex','pattern':'(a+)+$'}");
        String adversarial = "a".repeat(1 << 20) + "!";
        long start = System.nanoTime();
        EvaluatorResult r = set.evaluate(0, expecting(null), adversarial);
        assertThat(r.status()).isEqualTo(EvaluatorResult.Status.FAILED);
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(10));
        assertThat(set.evaluate(0, expecting(null), "a".repeat(1 << 20)).passed())
                .isTrue();
    }

    @Test
    void aSlowMatchEndsInATimeoutErrorInsteadOfHangingTheWorker() {
        // Accepted (about 20k steps), but each character costs thousands of steps: minutes on 1 MiB.
        ArrayNode plan = TestSupport.MAPPER.createArrayNode();
        plan.add(q("{'index':0,'name':'slow','kind':'regex','pattern':'(a{100}){100}b'}"));
        EvaluatorSet set = Evaluators.fromPlan(plan, env(dir).withRegexTimeLimit(Duration.ofMillis(300)));
        long start = System.nanoTime();
        EvaluatorResult r = set.evaluate(0, expecting(null), "a".repeat(1 << 20));
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(10));
        assertThat(r.error().orElseThrow().type()).isEqualTo(EvaluatorErrorType.TIMEOUT);
        assertThat(r.error().get().message()).contains("\"slow\"").contains("within 0.3 s");
    }

    /** A command evaluator entry running {@code sh -c script}. */
    static ObjectNode judge(String script) {
        ObjectNode judge = (ObjectNode) q("{'index':0,'name':'judge','kind':'command'}");
        judge.putArray("command").add("sh").add("-c").add(script);
        return judge;
    }

    EvaluatorResult one(ObjectNode entry, CaseRecord c, String output) {
        return Evaluators.fromPlan(TestSupport.MAPPER.createArrayNode().add(entry), env(dir))
                .evaluate(0, c, output);
    }

    @Test
    void commandEvaluatorsScoreAgainstPassScore() throws Exception {
        Path seen = dir.resolve("stdin");
        ObjectNode judge = judge("cat > '" + seen + "'; echo '0.75'").put("pass_score", 0.5);
        CaseRecord c = caseOf("q", "{\"id\":\"q\",\"input\":\"x\"}");
        EvaluatorResult r = one(judge, c, "an \"answer\"\n");
        assertThat(r.status()).isEqualTo(EvaluatorResult.Status.PASSED);
        assertThat(r.score()).isEqualTo(0.75);
        assertThat(Files.readString(seen))
                .isEqualTo("{\"case\":{\"id\":\"q\",\"input\":\"x\"},\"output\":\"an \\\"answer\\\"\\n\"}\n");
        judge.put("pass_score", 0.9);
        assertThat(one(judge, c, "x").status()).isEqualTo(EvaluatorResult.Status.FAILED);
        assertThat(one(judge, c, "x").score()).isEqualTo(0.75);
        assertThat(one(judge("echo '{\"score\": 1, \"why\": \"ok\"}'"), c, "x").passed())
                .isTrue();
        ObjectNode withEnv = judge("echo $LEVEL").put("pass_score", 0.2);
        withEnv.putObject("env").put("LEVEL", "0.25");
        EvaluatorResult level = one(withEnv, c, "x");
        assertThat(level.score()).isEqualTo(0.25);
        assertThat(level.passed()).isTrue();
    }

    @Test
    void commandEvaluatorFailuresAreErrorsWithClearMessages() {
        CaseRecord c = expecting("x");
        Map<String, EvaluatorErrorType> cases = Map.of(
                "echo high", EvaluatorErrorType.INVALID_SCORE,
                "echo 1.5", EvaluatorErrorType.INVALID_SCORE,
                "echo '0.5 0.6'", EvaluatorErrorType.INVALID_SCORE,
                "true", EvaluatorErrorType.INVALID_SCORE,
                "echo '{\"score\": \"1\"}'", EvaluatorErrorType.INVALID_SCORE,
                "echo 'Traceback: judge broke' >&2; exit 2", EvaluatorErrorType.EVALUATOR_CRASHED,
                "head -c 100000 /dev/zero", EvaluatorErrorType.INVALID_SCORE);
        cases.forEach((script, type) -> {
            EvaluatorResult r = one(judge(script), c, "x");
            assertThat(r.error()).as(script).isPresent();
            assertThat(r.error().get().type()).as(script).isEqualTo(type);
            assertThat(r.error().get().message())
                    .contains("evaluator \"judge\"")
                    .doesNotContain("\n");
        });
        EvaluatorResult crashed =
                one("{'name':'judge','kind':'command','command':['sh','-c','echo oops >&2; exit 2']}", c, "x");
        assertThat(crashed.error().orElseThrow().message())
                .contains("exited with status 2")
                .contains("oops");
        EvaluatorResult missing = one("{'name':'judge','kind':'command','command':['./no-judge']}", c, "x");
        assertThat(missing.error().orElseThrow().type()).isEqualTo(EvaluatorErrorType.EVALUATOR_NOT_FOUND);
        assertThat(missing.error().get().message()).contains("cannot be started");
        EvaluatorResult slow =
                one("{'name':'judge','kind':'command','command':['sleep','30'],'timeout_seconds':1}", c, "x");
        assertThat(slow.error().orElseThrow().type()).isEqualTo(EvaluatorErrorType.TIMEOUT);
        assertThat(slow.elapsed()).isLessThan(Duration.ofSeconds(15));
    }

    @Test
    void exactlyTheEvaluatorsOfTheMaskRunInIndexOrder() throws Exception {
        Path ran = dir.resolve("ran");
        EvaluatorSet set = plan(
                "{'name':'exact','kind':'exact_match'}",
                "{'name':'judge','kind':'command','command':['sh','-c','touch \\'" + ran + "\\'; echo 1']}",
                "{'name':'has','kind':'contains'}",
                "{'name':'re','kind':'regex','pattern':'^4'}");
        assertThat(set.size()).isEqualTo(4);
        assertThat(set.name(2)).isEqualTo("has");
        assertThat(set.kind(1)).isEqualTo("command");
        List<EvaluatorResult> rs = set.evaluate(0b1101L, expecting("42"), "42");
        assertThat(rs).extracting(EvaluatorResult::name).containsExactly("exact", "has", "re");
        assertThat(rs).extracting(EvaluatorResult::index).containsExactly(0, 2, 3);
        assertThat(rs).allSatisfy(r -> assertThat(r.passed()).isTrue());
        assertThat(ran).doesNotExist();
        assertThat(set.evaluate(0L, expecting("42"), "42")).isEmpty();
        assertThatThrownBy(() -> set.evaluate(0b10000L, expecting("42"), "42"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("selects evaluators the plan (4 evaluators) does not have");
    }

    @Test
    void interruptingKillsACommandEvaluatorAndSkipsTheRest() throws Exception {
        Path pid = dir.resolve("pid");
        EvaluatorSet set = plan(
                "{'name':'judge','kind':'command','command':['sh','-c','echo $$ > \\'" + pid + ".tmp\\'; mv \\'" + pid
                        + ".tmp\\' \\'" + pid + "\\'; exec sleep 60']}",
                "{'name':'exact','kind':'exact_match'}");
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            Future<List<EvaluatorResult>> f = pool.submit(() -> set.evaluate(0b11L, expecting("x"), "x"));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (!Files.exists(pid) && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            pool.shutdownNow();
            List<EvaluatorResult> rs = f.get(20, TimeUnit.SECONDS);
            assertThat(rs).hasSize(1);
            assertThat(rs.get(0).cancelled()).isTrue();
            CommandAgentTest.assertGone(Long.parseLong(Files.readString(pid).strip()));
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void badPlansNameTheEntryAndKey() {
        assertThatThrownBy(() -> plan("{'name':'re','kind':'regex','pattern':'(?=x)'}"))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("evaluator_plan[0].pattern: invalid regular expression");
        assertThatThrownBy(() -> plan("{'name':'re','kind':'regex','pattern':'((a{1000}){1000}){1000}'}"))
                .hasMessageContaining("evaluator_plan[0].pattern: regular expression is too large");
        assertThatThrownBy(() -> plan("{'name':'e','kind':'exact_match'}", "{'name':'j','kind':'oracle'}"))
                .hasMessageContaining("evaluator_plan[1].kind: unknown evaluator kind \"oracle\"");
        assertThatThrownBy(() -> plan("{'name':'e','kind':'exact_match'}", "{'name':'j','kind':'judge'}"))
                .hasMessageContaining("evaluator_plan[1].url: is required");
        assertThatThrownBy(() -> plan("{'name':'j','kind':'command','command':[]}"))
                .hasMessageContaining("evaluator_plan[0].command: must be a non-empty list");
        assertThatThrownBy(() -> plan("{'name':'j','kind':'command','command':['x'],'pass_score':2}"))
                .hasMessageContaining("evaluator_plan[0].pass_score: must be a number in [0.0, 1.0]");
        assertThatThrownBy(() -> Evaluators.fromPlan(q("[{'index':1,'name':'e','kind':'exact_match'}]"), env(dir)))
                .hasMessageContaining("evaluator_plan[0].index: must be 0");
        assertThatThrownBy(() -> Evaluators.fromPlan(q("[]"), env(dir)))
                .hasMessageContaining("evaluator_plan: must have 1..64 evaluators");
        assertThatThrownBy(() -> plan("{'kind':'exact_match'}"))
                .hasMessageContaining("evaluator_plan[0].name: is required");
    }

    @Test
    void aDamagedCaseIsReportedNotJudged() {
        EvaluatorSet set = plan("{'name':'exact','kind':'exact_match'}");
        assertThatThrownBy(() -> set.evaluate(0, caseOf("q-9", "{\"id\":"), "x"))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("case \"q-9\" is not valid JSON");
    }
}
