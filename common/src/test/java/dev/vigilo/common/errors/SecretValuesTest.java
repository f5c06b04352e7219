package dev.vigilo.common.errors;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class SecretValuesTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String KEY = "sk-live-0123456789abcdef";

    @Test
    void masksAValueWhereverItOccurs() {
        SecretValues s = SecretValues.of(List.of(KEY));
        assertThat(s.mask("401 {\"error\":\"bad key Bearer " + KEY + "\"}"))
                .isEqualTo("401 {\"error\":\"bad key Bearer ***\"}");
        assertThat(s.mask("x" + KEY + "y and " + KEY)).isEqualTo("x***y and ***");
        assertThat(s.appearsIn("prefix" + KEY)).isTrue();
        assertThat(s.mask("nothing here")).isEqualTo("nothing here");
        assertThat(s.mask((String) null)).isNull();
    }

    @Test
    void masksTheJsonEscapedSpellings() {
        String key = "sk-a/b\"c\\d-ключ-0123";
        SecretValues s = SecretValues.of(List.of(key));
        String escaped = "sk-a/b\\\"c\\\\d-ключ-0123";
        String slashes = "sk-a\\/b\\\"c\\\\d-ключ-0123";
        String ascii = "sk-a/b\\\"c\\\\d-\\u043a\\u043b\\u044e\\u0447-0123";
        String asciiUpper = "sk-a/b\\\"c\\\\d-\\u043A\\u043B\\u044E\\u0447-0123";
        for (String spelling : List.of(key, escaped, slashes, ascii, asciiUpper)) {
            assertThat(s.mask("{\"detail\":\"" + spelling + "\"}")).as(spelling).isEqualTo("{\"detail\":\"***\"}");
        }
    }

    @Test
    void masksTheUrlEncodedSpellings() {
        String key = "sk a/b+c=d~e-0123";
        SecretValues s = SecretValues.of(List.of(key));
        String form = URLEncoder.encode(key, StandardCharsets.UTF_8); // sk+a%2Fb%2Bc%3Dd%7Ee-0123
        String percent = "sk%20a%2Fb%2Bc%3Dd~e-0123";
        for (String spelling : List.of(form, form.toLowerCase(), percent, "sk%20a%2fb%2bc%3dd~e-0123")) {
            assertThat(s.mask("GET /v1?key=" + spelling + "&x=1")).as(spelling).isEqualTo("GET /v1?key=***&x=1");
        }
    }

    @Test
    void aShortValueIsMaskedOnlyWhereItStandsAlone() {
        SecretValues s = SecretValues.of(List.of("EMPTY"));
        assertThat(s.mask("Bearer EMPTY")).isEqualTo("Bearer ***");
        assertThat(s.mask("\"EMPTY\",EMPTY.")).isEqualTo("\"***\",***.");
        assertThat(s.mask("EMPTYING the TEMPTY bin")).isEqualTo("EMPTYING the TEMPTY bin");
        assertThat(s.appearsIn("EMPTYING")).isFalse();
        // at MIN_ANYWHERE characters a value is masked inside words too
        SecretValues eight = SecretValues.of(List.of("abcdefgh"));
        assertThat(eight.mask("xabcdefghx")).isEqualTo("x***x");
    }

    @Test
    void aLongerSpellingWinsOverAShorterValueInsideIt() {
        SecretValues s = SecretValues.of(List.of("sk-abcdefgh", "sk-abcdefgh-and-more"));
        assertThat(s.mask("k=sk-abcdefgh-and-more;")).isEqualTo("k=***;");
        assertThat(s.size()).isEqualTo(2);
    }

    @Test
    void cutEdgesThatHoldPartOfAValueAreMasked() {
        SecretValues s = SecretValues.of(List.of(KEY));
        String tail = KEY.substring(10) + " failed; see " + KEY + " and " + KEY.substring(0, 7);
        assertThat(s.maskCut(tail, true, true)).isEqualTo("*** failed; see *** and ***");
        assertThat(s.maskCut(tail, false, false))
                .isEqualTo(KEY.substring(10) + " failed; see *** and " + KEY.substring(0, 7));
        assertThat(s.maskCut("unrelated text", true, true)).isEqualTo("unrelated text");
    }

    @Test
    void masksStringsFieldNamesAndNumbersOfATreeWithoutChangingIt() throws Exception {
        SecretValues s = SecretValues.of(List.of(KEY, "31415926535"));
        JsonNode tree = JSON.readTree("{\"error\":{\"message\":\"bad key Bearer " + KEY + "\"},\"" + KEY
                + "\":[1,31415926535,\"x " + KEY + "\",true,null],\"n\":2}");
        String before = tree.toString();
        JsonNode masked = s.mask(tree);
        assertThat(masked.toString())
                .isEqualTo("{\"error\":{\"message\":\"bad key Bearer ***\"},\"***\":[1,\"***\",\"x ***\",true,null],"
                        + "\"n\":2}");
        assertThat(tree.toString()).isEqualTo(before);
        JsonNode clean = JSON.readTree("{\"a\":[\"b\",1]}");
        assertThat(s.mask(clean)).isSameAs(clean);
        assertThat(SecretValues.NONE.mask(tree)).isSameAs(tree);
    }

    @Test
    void collectsTheValuesOfEveryEnvKeyOfADocument() throws Exception {
        JsonNode config = JSON.readTree("""
                {"agent": {"kind": "http", "api_key_env": "AGENT_KEY", "env": {"MODE": "plain-value"}},
                 "judges": [{"api_key_env": "JUDGE_KEY"}, {"api_key_env": "UNSET_KEY"}],
                 "tools": {"search": {"token_env": "TOOL_TOKEN", "note": "TOOL_TOKEN_env"}}}
                """);
        Map<String, String> env = Map.of(
                "AGENT_KEY", "agent-secret-1",
                "JUDGE_KEY", "judge-secret-2",
                "TOOL_TOKEN", "tool-secret-3",
                "MODE", "mode-value-4");
        SecretValues s = SecretValues.ofEnvKeys(config, env::get);
        assertThat(s.size()).isEqualTo(3);
        assertThat(s.mask("agent-secret-1 judge-secret-2 tool-secret-3 mode-value-4 plain-value"))
                .isEqualTo("*** *** *** mode-value-4 plain-value");
        assertThat(SecretValues.ofEnvKeys(null, env::get).isEmpty()).isTrue();
    }

    @Test
    void combinesValuesAndNeverPrintsThem() {
        SecretValues s = SecretValues.of(List.of(KEY)).and("other-secret-value").and((String) null);
        assertThat(s.size()).isEqualTo(2);
        assertThat(s.mask(KEY + " other-secret-value")).isEqualTo("*** ***");
        assertThat(s.toString()).isEqualTo("SecretValues[2 values]").doesNotContain(KEY);
        assertThat(SecretValues.of(List.of("", KEY))).isEqualTo(SecretValues.of(List.of(KEY)));
        assertThat(SecretValues.NONE.and(s)).isSameAs(s);
        assertThat(s.and(SecretValues.NONE)).isSameAs(s);
        assertThat(SecretValues.NONE.mask(KEY)).isEqualTo(KEY);
    }
}
