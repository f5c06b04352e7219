package dev.vigilo.agent;

import static dev.vigilo.agent.TestSupport.caseOf;
import static dev.vigilo.agent.TestSupport.env;
import static dev.vigilo.agent.TestSupport.q;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpServer;
import dev.vigilo.common.errors.InvalidInputException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The json, numeric and similarity evaluators: what passes, what fails, what is an error, and why. */
class JsonNumericSimilarityTest {
    @TempDir
    Path dir;

    EvaluatorSet plan(String entry) {
        ObjectNode e = (ObjectNode) q(entry);
        e.put("index", 0);
        ArrayNode plan = TestSupport.MAPPER.createArrayNode().add(e);
        return Evaluators.fromPlan(plan, env(dir));
    }

    EvaluatorResult one(String entry, CaseRecord c, String output) {
        return plan(entry).evaluate(0, c, output);
    }

    static CaseRecord expecting(Object expected) {
        return caseOf("q-1", "question", expected);
    }

    static CaseRecord expectingJson(String expectedJson) {
        return caseOf("q-1", "{\"id\":\"q-1\",\"input\":\"x\",\"expected\":" + expectedJson + "}");
    }

    // json

    static final String JSON = "{'name':'js','kind':'json'}";
    static final String SCHEMA = "{'name':'js','kind':'json','schema':{'type':'object','required':['answer'],"
            + "'properties':{'answer':{'type':'integer','minimum':0}}}}";

    @Test
    void jsonPassesExactlyOneJsonValue() {
        EvaluatorResult ok = one(JSON, expecting(null), " {\"a\": [1, 2]}\n");
        assertThat(ok.status()).isEqualTo(EvaluatorResult.Status.PASSED);
        assertThat(ok.score()).isEqualTo(1.0);
        assertThat(ok.reason().orElseThrow()).contains("output is JSON (an object)");
        assertThat(one(JSON, expecting(null), "42").reason().orElseThrow()).contains("output is JSON (a number)");
        assertThat(one(JSON, expecting(null), "\"s\"").passed()).isTrue();
        assertThat(one(JSON, expecting(null), "null").reason().orElseThrow()).contains("output is JSON (null)");
        for (String bad : List.of(
                "{\"a\": 1} trailing",
                "{\"a\": 1}{\"b\": 2}",
                "{\"a\": 1, \"a\": 2}",
                "{a: 1}",
                "NaN",
                "[1, 2,]",
                "'x'")) {
            EvaluatorResult r = one(JSON, expecting(null), bad);
            assertThat(r.status()).as(bad).isEqualTo(EvaluatorResult.Status.FAILED);
            assertThat(r.score()).as(bad).isZero();
            assertThat(r.reason().orElseThrow())
                    .as(bad)
                    .startsWith("output is not JSON: ")
                    .doesNotContain("\n");
        }
        assertThat(one(JSON, expecting(null), "").reason().orElseThrow()).contains("output is empty, not JSON");
        assertThat(one(JSON, expecting(null), "  \n").passed()).isFalse();
    }

    @Test
    void jsonWithASchemaGivesTheValidatorsMessageWhenItIsViolated() {
        EvaluatorResult ok = one(SCHEMA, expecting(null), "{\"answer\": 3}");
        assertThat(ok.passed()).isTrue();
        assertThat(ok.reason().orElseThrow()).contains("output is JSON (an object) and satisfies the schema");
        EvaluatorResult negative = one(SCHEMA, expecting(null), "{\"answer\": -1}");
        assertThat(negative.status()).isEqualTo(EvaluatorResult.Status.FAILED);
        assertThat(negative.reason().orElseThrow())
                .startsWith("output is JSON (an object) but does not satisfy the schema: at /answer: ")
                .contains("minimum");
        assertThat(one(SCHEMA, expecting(null), "{}").reason().orElseThrow()).contains("answer");
        assertThat(one(SCHEMA, expecting(null), "[1]").reason().orElseThrow())
                .contains("does not satisfy the schema")
                .contains("array");
        assertThat(one(SCHEMA, expecting(null), "{\"answer\": 3").reason().orElseThrow())
                .startsWith("output is not JSON");
    }

    @Test
    void anUnusableSchemaIsRefusedWhenThePlanIsBuilt() {
        assertThatThrownBy(() -> plan("{'name':'js','kind':'json','schema':{'type':'no-such-type'}}"))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("evaluator_plan[0].schema: is not a usable JSON Schema");
        assertThatThrownBy(() -> plan("{'name':'js','kind':'json','schema':[1]}"))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("evaluator_plan[0].schema");
    }

    @Test
    void aSchemaReferringToARemoteDocumentFetchesNothing() throws Exception {
        HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        AtomicInteger hits = new AtomicInteger();
        server.createContext("/", exchange -> {
            hits.incrementAndGet();
            byte[] body = "{\"type\":\"string\"}".getBytes(StandardCharsets.UTF_8);
            exchange.sendResponseHeaders(200, body.length);
            exchange.getResponseBody().write(body);
            exchange.close();
        });
        server.start();
        try {
            String url = "http://127.0.0.1:" + server.getAddress().getPort() + "/s.json";
            String entry = "{'name':'js','kind':'json','schema':{'$ref':'" + url + "'}}";
            Throwable refused = catchThrowable(() -> plan(entry).evaluate(0, expecting(null), "\"x\""));
            assertThat(refused).isInstanceOf(InvalidInputException.class).hasMessageContaining("schema");
            assertThat(hits.get()).isZero();
        } finally {
            server.stop(0);
        }
    }

    // numeric

    static final String ABS = "{'name':'num','kind':'numeric','tolerance':0.5}";
    static final String REL = "{'name':'num','kind':'numeric','relative_tolerance':0.01}";

    @Test
    void numericReadsTheLastNumberOfTheOutput() {
        EvaluatorResult r = one(ABS, expecting(42), "First 17 + 25 = 42.3, so the answer is **42.4**.");
        assertThat(r.status()).isEqualTo(EvaluatorResult.Status.PASSED);
        assertThat(r.score()).isEqualTo(1.0);
        assertThat(r.reason().orElseThrow()).contains("found `42.4`, within 0.5 of expected 42: the difference is 0.4");
        EvaluatorResult far = one(ABS, expecting(42), "about 40");
        assertThat(far.status()).isEqualTo(EvaluatorResult.Status.FAILED);
        assertThat(far.score()).isZero();
        assertThat(far.reason().orElseThrow())
                .contains("found `40`, not within 0.5 of expected 42: the difference is 2");
        assertThat(one(ABS, expecting(1234.5), "It costs $1,234.5 in total").passed())
                .isTrue();
        assertThat(one(ABS, expecting(-3), "x = -3").passed()).isTrue();
        assertThat(one(ABS, expecting(60), "60%").passed()).isTrue();
        assertThat(one(ABS, expecting(0.5), "ratio .5").passed()).isTrue();
        assertThat(one(ABS, expecting(600), "6e2").passed()).isTrue();
        // Digits inside words are not numbers.
        assertThat(one(ABS, expecting(2), "H2O v2 is 7").reason().orElseThrow()).contains("found `7`");
        // The boundary is inclusive.
        assertThat(one(ABS, expecting(42), "42.5").passed()).isTrue();
        assertThat(one(ABS, expecting(42), "42.50001").passed()).isFalse();
    }

    @Test
    void numericWithoutANumberFailsAndNanOrInfinityAreNotNumbers() {
        for (String output : List.of("", "no idea", "NaN", "Infinity", "-Infinity", "e5", "-")) {
            EvaluatorResult r = one(ABS, expecting(42), output);
            assertThat(r.status()).as(output).isEqualTo(EvaluatorResult.Status.FAILED);
            assertThat(r.reason()).as(output).contains("no number in the output (expected 42)");
        }
    }

    @Test
    void relativeToleranceScalesWithExpectedAndDecimalArithmeticIsExact() {
        assertThat(one(REL, expecting(1000), "1009.9").passed()).isTrue();
        EvaluatorResult r = one(REL, expecting(1000), "1010.5");
        assertThat(r.passed()).isFalse();
        assertThat(r.reason().orElseThrow())
                .contains("found `1010.5`, not within relative tolerance 0.01 of expected 1000 (allowed difference"
                        + " 10): the difference is 10.5");
        // Zero expected: only zero itself is within any relative tolerance.
        assertThat(one(REL, expecting(0), "0.0").passed()).isTrue();
        assertThat(one(REL, expecting(0), "0.000001").passed()).isFalse();
        // 0.1 + 0.2 in binary floating point is 0.30000000000000004; here 0.3 is 0.3.
        assertThat(one("{'name':'num','kind':'numeric','tolerance':0}", expecting("0.3"), "0.3")
                        .passed())
                .isTrue();
        assertThat(one("{'name':'num','kind':'numeric','tolerance':0}", expectingJson("0.1"), "0.10")
                        .passed())
                .isTrue();
    }

    @Test
    void hugeNumbersAreComparedLikeAnyOtherAndAbsurdOnesAreRead() {
        assertThat(one(REL, expecting("1e400"), "1.005e400").passed()).isTrue();
        assertThat(one(REL, expecting("1e400"), "1.02E+400").passed()).isFalse();
        // A JSON number is read as a double: beyond its range it cannot be expected, and says so.
        EvaluatorResult beyond = one(REL, expectingJson("1e400"), "1e400");
        assertThat(beyond.error().orElseThrow().type()).isEqualTo(EvaluatorErrorType.INVALID_EXPECTED);
        assertThat(beyond.error().get().message()).contains("give it as a string");
        assertThat(one(ABS, expectingJson("123456789012345678901234567890"), "123456789012345678901234567890.4")
                        .passed())
                .isTrue();
        assertThat(one(ABS, expecting(1), "1e-400").reason().orElseThrow())
                .contains("found `1e-400`, not within 0.5 of expected 1");
        EvaluatorResult absurd = one(ABS, expecting(1), "x 1e999999999");
        assertThat(absurd.status()).isEqualTo(EvaluatorResult.Status.FAILED);
        assertThat(absurd.reason().orElseThrow()).contains("too large to read as a number");
        String digits = "9".repeat(1000);
        assertThat(one(ABS, expecting(1), digits).reason().orElseThrow()).contains("too long (over 400 characters)");
    }

    @Test
    void anExpectedThatIsNotANumberIsAnEvaluatorErrorNeverAFailure() {
        for (String expected : List.of(
                "\"NaN\"", "\"Infinity\"", "\"forty-two\"", "\"42 apples\"", "true", "[42]", "{\"n\":42}", "\"\"")) {
            EvaluatorResult r = one(ABS, expectingJson(expected), "42");
            assertThat(r.status()).as(expected).isEqualTo(EvaluatorResult.Status.ERROR);
            assertThat(r.error().orElseThrow().type()).as(expected).isEqualTo(EvaluatorErrorType.INVALID_EXPECTED);
            assertThat(r.error().get().message())
                    .as(expected)
                    .contains("evaluator \"num\" (numeric): expected of case \"q-1\" is")
                    .contains("not a number");
        }
        assertThat(one(ABS, expecting(" 42 "), "42").passed()).isTrue();
        assertThat(one(ABS, expecting("-1.5e3"), "-1500").passed()).isTrue();
        assertThat(one(ABS, expecting(null), "42").error().orElseThrow().type())
                .isEqualTo(EvaluatorErrorType.MISSING_EXPECTED);
    }

    @Test
    void aNumericPlanNeedsExactlyOneTolerance() {
        assertThatThrownBy(() -> plan("{'name':'num','kind':'numeric'}"))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("exactly one of tolerance and relative_tolerance");
        assertThatThrownBy(() -> plan("{'name':'num','kind':'numeric','tolerance':1,'relative_tolerance':1}"))
                .isInstanceOf(InvalidInputException.class);
        assertThatThrownBy(() -> plan("{'name':'num','kind':'numeric','tolerance':-1}"))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("evaluator_plan[0].tolerance");
    }

    // similarity

    static final String SIM = "{'name':'sim','kind':'similarity','threshold':0.8}";

    @Test
    void similarityScoresTheNormalisedLevenshteinRatio() {
        EvaluatorResult same = one(SIM, expecting("kitten"), "kitten");
        assertThat(same.score()).isEqualTo(1.0);
        assertThat(same.reason().orElseThrow()).contains("similarity 1 = 1 - 0/6");
        // kitten -> sitting: 3 edits over 7 characters.
        EvaluatorResult r = one(SIM, expecting("kitten"), "sitting");
        assertThat(r.status()).isEqualTo(EvaluatorResult.Status.FAILED);
        assertThat(r.score()).isEqualTo(1 - 3.0 / 7);
        assertThat(r.reason().orElseThrow())
                .contains("similarity 0.5714 = 1 - 3/7 (edit distance / longer length in characters) < threshold 0.8");
        EvaluatorResult close = one(SIM, expecting("the capital is Paris"), "the capital is paris");
        assertThat(close.passed()).isTrue();
        assertThat(close.score()).isEqualTo(1 - 1.0 / 20);
        assertThat(close.reason().orElseThrow()).contains(">= threshold 0.8");
        // Exactly at the threshold passes: 1 edit over 5 characters is 0.8.
        assertThat(one(SIM, expecting("abcde"), "abcdX").passed()).isTrue();
        assertThat(one(SIM, expecting("abcde"), "abcXY").passed()).isFalse();
    }

    @Test
    void similarityOptionsEmptyTextsAndCodePoints() {
        String folded = "{'name':'sim','kind':'similarity','threshold':1,'case_sensitive':false}";
        assertThat(one(folded, expecting("PARIS"), "paris").passed()).isTrue();
        String untrimmed = "{'name':'sim','kind':'similarity','threshold':0,'trim':false}";
        assertThat(one(untrimmed, expecting("ab"), " ab ").score()).isEqualTo(0.5);
        assertThat(one(SIM, expecting("ab"), " ab\n").score()).isEqualTo(1.0);
        assertThat(one(SIM, expecting(""), "").score()).isEqualTo(1.0);
        assertThat(one(SIM, expecting(""), "").reason().orElseThrow()).contains("1 - 0/0");
        assertThat(one(SIM, expecting("abc"), "").score()).isZero();
        // One emoji is one character: one substitution over 3, not two over 6 UTF-16 units.
        EvaluatorResult emoji = one(SIM, expecting("a😀b"), "a😁b");
        assertThat(emoji.reason().orElseThrow()).contains("1 - 1/3");
        assertThat(Evaluators.passScore(q(SIM))).isEqualTo(0.8);
        assertThat(Evaluators.passScore(q("{'kind':'command','pass_score':0.3}")))
                .isEqualTo(0.3);
        assertThat(Evaluators.passScore(q(ABS))).isEqualTo(1.0);
    }

    @Test
    void similarityOfTextsTooLongToCompareIsAnErrorNotAHang() {
        long start = System.nanoTime();
        EvaluatorResult r = one(SIM, expecting("a".repeat(20_000)), "b".repeat(20_000));
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(5));
        assertThat(r.error().orElseThrow().type()).isEqualTo(EvaluatorErrorType.INPUT_TOO_LARGE);
        assertThat(r.error().get().message())
                .contains("evaluator \"sim\" (similarity)")
                .contains("20000");
        assertThat(one(SIM, expecting("a".repeat(10_000)), "a".repeat(9_999) + "b")
                        .passed())
                .isTrue();
    }

    @Test
    void interruptingASimilarityCancelsIt() throws Exception {
        EvaluatorSet set = plan(SIM);
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            Future<EvaluatorResult> f = pool.submit(() -> {
                Thread.currentThread().interrupt();
                return set.evaluate(0, expecting("abc"), "abd");
            });
            EvaluatorResult r = f.get(10, TimeUnit.SECONDS);
            assertThat(r.cancelled()).isTrue();
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void missingThresholdOrOutOfRangeIsRefused() {
        assertThatThrownBy(() -> plan("{'name':'sim','kind':'similarity'}"))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("evaluator_plan[0].threshold: is required");
        assertThatThrownBy(() -> plan("{'name':'sim','kind':'similarity','threshold':1.5}"))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("evaluator_plan[0].threshold");
        assertThatThrownBy(() -> plan("{'name':'x','kind':'levenshtein'}"))
                .isInstanceOf(InvalidInputException.class)
                .hasMessageContaining("json, numeric, similarity");
    }

    @Test
    void aDistanceIsCommutativeAndCountsEdits() throws Exception {
        int[] a = "flaw".codePoints().toArray();
        int[] b = "lawn".codePoints().toArray();
        assertThat(SimilarityEvaluator.distance(a, b)).isEqualTo(2);
        assertThat(SimilarityEvaluator.distance(b, a)).isEqualTo(2);
        assertThat(SimilarityEvaluator.distance(new int[0], a)).isEqualTo(4);
    }
}
