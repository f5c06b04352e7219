package dev.vigilo.agent;

import static dev.vigilo.agent.TestSupport.caseOf;
import static dev.vigilo.agent.TestSupport.env;
import static dev.vigilo.agent.TestSupport.q;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.vigilo.common.errors.SecretValues;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Every result of a built-in evaluator says why; a command evaluator's reason is kept; reasons are bounded, masked. */
class EvaluatorReasonsTest {
    static final String KEY = "sk-reason-secret-0123456789";

    @TempDir
    Path dir;

    EvaluatorResult one(String entry, CaseRecord c, String output) {
        return one((ObjectNode) q(entry), c, output, SecretValues.NONE);
    }

    EvaluatorResult one(ObjectNode entry, CaseRecord c, String output, SecretValues secrets) {
        entry.put("index", 0);
        ArrayNode plan = TestSupport.MAPPER.createArrayNode().add(entry);
        return Evaluators.fromPlan(plan, env(dir).withSecrets(secrets)).evaluate(0, c, output);
    }

    static CaseRecord expecting(Object expected) {
        return caseOf("q-1", "question", expected);
    }

    static String reason(EvaluatorResult r) {
        return r.reason().orElseThrow();
    }

    @Test
    void exactMatchSaysWhatWasExpectedAndWhatCame() {
        String exact = "{'name':'exact','kind':'exact_match'}";
        assertThat(reason(one(exact, expecting(42), "41"))).isEqualTo("expected `42`, got `41`");
        assertThat(reason(one(exact, expecting(42), " 42\n"))).isEqualTo("output equals expected `42`");
        assertThat(reason(one(exact, expecting("a"), ""))).isEqualTo("expected `a`, got ``");
        assertThat(reason(one(exact, expecting("line one"), "line\ntwo")))
                .isEqualTo("expected `line one`, got `line\\ntwo`");
    }

    @Test
    void longTextsShowAWindowAroundTheFirstDifferenceNotTheWholeTexts() {
        String base = "x".repeat(5000);
        String want = base + "ABCDEFGH" + "y".repeat(5000);
        String got = base + "ABCDXFGH" + "y".repeat(5000);
        String r = reason(one("{'name':'exact','kind':'exact_match'}", expecting(want), got));
        assertThat(r)
                .isEqualTo("expected `…" + "x".repeat(26) + "ABCDEFGH" + "y".repeat(46) + "…`, got `…" + "x".repeat(26)
                        + "ABCDXFGH" + "y".repeat(46) + "…` (first difference at character 5005)");
        // A difference at the very end: the window ends with the text.
        String tail = reason(one("{'name':'exact','kind':'exact_match'}", expecting(base + "1"), base + "12"));
        assertThat(tail)
                .contains("x1`, got")
                .endsWith("x12` (first difference at character 5002)")
                .contains("got `…" + "x".repeat(78) + "12`");
    }

    @Test
    void positionsAndWindowsCountCodePointsNotUtf16Units() {
        String emoji = "😀".repeat(100);
        String r = reason(one("{'name':'exact','kind':'exact_match'}", expecting(emoji + "a"), emoji + "b"));
        assertThat(r).contains("(first difference at character 101)");
        // Near the end the window shows more before the difference: 80 characters in all.
        assertThat(r).startsWith("expected `…" + "😀".repeat(79) + "a`, got `…" + "😀".repeat(79) + "b`");
        String c = reason(one("{'name':'has','kind':'contains'}", expecting("b"), "😀😀b"));
        assertThat(c).isEqualTo("output contains expected `b` at character 3");
    }

    @Test
    void containsAndRegexSayWhereOrThatNothingWasFound() {
        assertThat(reason(one("{'name':'has','kind':'contains'}", expecting("Paris"), "It is Paris.")))
                .isEqualTo("output contains expected `Paris` at character 7");
        assertThat(reason(one("{'name':'has','kind':'contains'}", expecting("Paris"), "Lyon")))
                .isEqualTo("expected `Paris` not found in output `Lyon`");
        assertThat(reason(one("{'name':'re','kind':'regex','pattern':'\\\\d+'}", expecting(null), "abc 123 x")))
                .isEqualTo("pattern `\\d+` matched `123` at character 5");
        assertThat(reason(one("{'name':'re','kind':'regex','pattern':'^\\\\d+$'}", expecting(null), "abc")))
                .isEqualTo("pattern `^\\d+$` did not match output `abc`");
        String longOutput = "z".repeat(200);
        assertThat(reason(one("{'name':'re','kind':'regex','pattern':'q'}", expecting(null), longOutput)))
                .isEqualTo("pattern `q` did not match output `" + "z".repeat(80) + "…`");
    }

    @Test
    void aCommandEvaluatorsReasonIsKeptAndAWrongOneIsAnError() {
        CaseRecord c = expecting("x");
        EvaluatorResult r = one(judge("echo '{\"score\": 0.2, \"reason\": \"off by -1\"}'"), c, "x", SecretValues.NONE);
        assertThat(r.status()).isEqualTo(EvaluatorResult.Status.FAILED);
        assertThat(r.score()).isEqualTo(0.2);
        assertThat(r.reason()).contains("off by -1");
        assertThat(one(judge("echo 0.5"), c, "x", SecretValues.NONE).reason()).isEmpty();
        assertThat(one(judge("echo '{\"score\": 1, \"reason\": null}'"), c, "x", SecretValues.NONE)
                        .reason())
                .isEmpty();
        EvaluatorResult wrong = one(judge("echo '{\"score\": 1, \"reason\": 7}'"), c, "x", SecretValues.NONE);
        assertThat(wrong.error().orElseThrow().type()).isEqualTo(EvaluatorErrorType.INVALID_SCORE);
        assertThat(wrong.error().get().message()).contains("printed a reason that is a number");
        assertThat(wrong.reason()).isEmpty();
    }

    @Test
    void aLongReasonIsCutOnACodePointBoundaryWithinTwoKiB() {
        // 3-byte characters: 2 KiB is not a multiple of 3, so a cut by bytes would split one.
        String text = "€".repeat(5000);
        EvaluatorResult r = one(
                judge("cat >/dev/null; printf '{\"score\": 1, \"reason\": \"%s\"}' \"$(printf '€%.0s' $(seq 5000))\""),
                expecting("x"),
                "x",
                SecretValues.NONE);
        String reason = reason(r);
        assertThat(reason.getBytes(StandardCharsets.UTF_8).length).isLessThanOrEqualTo(2048);
        assertThat(reason).endsWith("…").startsWith("€€€");
        assertThat(reason.substring(0, reason.length() - 1)).matches("€+");
        assertThat(text).startsWith(reason.substring(0, reason.length() - 1));
        assertThat(Reasons.bound("a".repeat(2048), SecretValues.NONE)).hasSize(2048);
        assertThat(Reasons.bound("a".repeat(2049), SecretValues.NONE)).endsWith("…");
        assertThat(Reasons.utf8Length(Reasons.bound("a".repeat(2049), SecretValues.NONE)))
                .isLessThanOrEqualTo(2048);
    }

    @Test
    void reasonsHaveTheRunsSecretsMaskedAlsoWhereAWindowCutsOne() {
        SecretValues secrets = SecretValues.of(List.of(KEY));
        EvaluatorResult r = one(
                judge("cat >/dev/null; echo '{\"score\": 1, \"reason\": \"the key is " + KEY + "\"}'"),
                expecting("x"),
                "x",
                secrets);
        assertThat(reason(r)).isEqualTo("the key is ***");
        ObjectNode exact = (ObjectNode) q("{'name':'exact','kind':'exact_match'}");
        assertThat(reason(one(exact, expecting("42"), "my key: " + KEY, secrets)))
                .isEqualTo("expected `42`, got `my key: ***`");
        // The window around the difference starts inside the key: what it shows of it is masked too.
        String before = "p".repeat(200) + KEY + "r".repeat(20);
        String got = reason(one(exact.deepCopy(), expecting(before + "A" + "q".repeat(200)), before + "B", secrets));
        assertThat(got).contains("(first difference at character " + (before.length() + 1) + ")");
        for (int n = 4; n < KEY.length(); n++) {
            assertThat(got).doesNotContain(KEY.substring(KEY.length() - n));
        }
        ObjectNode re = (ObjectNode) q("{'name':'re','kind':'regex','pattern':'secret-\\\\d+'}");
        String matched = reason(one(re, expecting(null), "x " + KEY + " y", secrets));
        assertThat(matched).doesNotContain("0123456789").startsWith("pattern `secret-\\d+` matched `***`");
    }

    @Test
    void anErrorCarriesNoReasonAndResultsWithoutOneStayConstructible() {
        EvaluatorResult missing = one("{'name':'exact','kind':'exact_match'}", expecting(null), "x");
        assertThat(missing.error()).isPresent();
        assertThat(missing.reason()).isEmpty();
        EvaluatorResult old =
                new EvaluatorResult(0, "e", EvaluatorResult.Status.PASSED, 1, Optional.empty(), Duration.ZERO);
        assertThat(old.reason()).isEmpty();
        assertThatThrownBy(() -> new EvaluatorResult(
                        0,
                        "e",
                        EvaluatorResult.Status.PASSED,
                        1,
                        Optional.empty(),
                        Duration.ZERO,
                        Optional.of("x".repeat(2049))))
                .isInstanceOf(IllegalArgumentException.class);
    }

    /** A command evaluator entry running {@code sh -c script}. */
    static ObjectNode judge(String script) {
        ObjectNode judge = (ObjectNode) q("{'name':'judge','kind':'command'}");
        judge.putArray("command").add("sh").add("-c").add(script);
        return judge;
    }
}
