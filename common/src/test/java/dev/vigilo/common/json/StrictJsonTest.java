package dev.vigilo.common.json;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

class StrictJsonTest {
    private final ObjectMapper mapper = StrictJson.newMapper();

    @Test
    void readsOneValue() throws Exception {
        assertThat(mapper.readTree("{\"a\":[1,2]}").path("a").size()).isEqualTo(2);
    }

    @Test
    void refusesDuplicateKeysTrailingContentAndDeepNesting() {
        assertThatThrownBy(() -> mapper.readTree("{\"a\":1,\"a\":2}"))
                .isInstanceOf(JsonProcessingException.class)
                .hasMessageContaining("Duplicate field 'a'");
        assertThatThrownBy(() -> mapper.readTree("{} {}")).isInstanceOf(JsonProcessingException.class);
        assertThatThrownBy(() -> mapper.readTree("[".repeat(300) + "]".repeat(300)))
                .isInstanceOf(JsonProcessingException.class);
    }

    @Test
    void eachMapperIsItsOwn() {
        assertThat(StrictJson.newMapper()).isNotSameAs(StrictJson.newMapper());
    }
}
