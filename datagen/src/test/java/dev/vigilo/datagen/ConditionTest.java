package dev.vigilo.datagen;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.math.BigDecimal;
import java.util.List;
import org.junit.jupiter.api.Test;

class ConditionTest {
    private static final JsonNodeFactory F = JsonNodeFactory.instance;

    private static ObjectNode fields(String name, JsonNode value) {
        ObjectNode o = F.objectNode();
        o.set(name, value);
        return o;
    }

    @Test
    void aNumberReadBackFromTheLogEqualsTheSameNumberFromYaml() {
        // `until: {field: rounds, equals: 2}` parses 2 as an int; a resumed item's field comes from the log as a long.
        Condition until = new Condition("rounds", F.numberNode(2));
        assertThat(until.test(fields("rounds", F.numberNode(2L)))).isTrue();
        assertThat(until.test(fields("rounds", F.numberNode(2)))).isTrue();
        assertThat(until.test(fields("rounds", F.numberNode(2.0)))).isTrue();
        assertThat(until.test(fields("rounds", F.numberNode(3L)))).isFalse();
        assertThat(until.test(fields("rounds", F.textNode("2")))).isFalse();
        assertThat(until.test(F.objectNode())).isFalse();
    }

    @Test
    void numbersInsideArraysAndObjectsCompareByValueToo() {
        Condition c = new Condition("x", F.arrayNode().add(1).add(F.objectNode().put("n", 2)));
        assertThat(c.test(fields("x", F.arrayNode().add(1L).add(F.objectNode().put("n", 2L)))))
                .isTrue();
        assertThat(c.test(fields("x", F.arrayNode().add(1L).add(F.objectNode().put("n", 3L)))))
                .isFalse();
    }

    @Test
    void truthinessWithoutEquals() {
        Condition c = new Condition("keep", null);
        assertThat(c.test(fields("keep", F.booleanNode(true)))).isTrue();
        assertThat(c.test(fields("keep", F.numberNode(0L)))).isFalse();
        assertThat(c.test(fields("keep", F.textNode("")))).isFalse();
        assertThat(c.test(F.objectNode())).isFalse();
    }

    @Test
    void boundsAndListsForJudgeThenFilter() {
        Condition atLeast4 = new Condition("score", null, new BigDecimal("4"), null, List.of());
        assertThat(atLeast4.test(fields("score", F.numberNode(4L)))).isTrue();
        assertThat(atLeast4.test(fields("score", F.numberNode(4.5)))).isTrue();
        assertThat(atLeast4.test(fields("score", F.numberNode(3.999)))).isFalse();
        assertThat(atLeast4.test(fields("score", F.textNode("5"))))
                .as("not a number")
                .isFalse();
        assertThat(atLeast4.test(F.objectNode())).as("missing").isFalse();

        Condition between = new Condition("score", null, new BigDecimal("1"), new BigDecimal("2.5"), List.of());
        assertThat(between.test(fields("score", F.numberNode(2.5)))).isTrue();
        assertThat(between.test(fields("score", F.numberNode(2.51)))).isFalse();
        assertThat(between.test(fields("score", F.numberNode(0L)))).isFalse();

        Condition grades = new Condition("grade", null, null, null, List.of(F.textNode("A"), F.numberNode(1)));
        assertThat(grades.test(fields("grade", F.textNode("A")))).isTrue();
        assertThat(grades.test(fields("grade", F.numberNode(1.0))))
                .as("numbers by value")
                .isTrue();
        assertThat(grades.test(fields("grade", F.textNode("B")))).isFalse();
    }
}
