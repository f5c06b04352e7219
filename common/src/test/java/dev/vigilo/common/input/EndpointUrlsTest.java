package dev.vigilo.common.input;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import org.junit.jupiter.api.Test;

class EndpointUrlsTest {
    @Test
    void userInformationAndKeyLikeParametersAreCredentials() {
        for (String url : new String[] {
            "http://user:pw@host/v1/chat/completions",
            "http://sk-live-123@host/v1",
            "https://host/v1?key=sk-123",
            "https://host/v1?model=m&API_KEY=sk-123",
            "https://host/v1?apikey=x",
            "https://host/v1?api-key=x",
            "https://host/v1?access_token=x",
            "https://host/v1?token=x",
            "https://host/v1?secret=x",
            "https://host/v1?password=x",
            "https://host/v1?sig=x",
            "https://host/v1?Signature=x",
            "https://host/v1?X-Amz-Signature=x",
            "https://host/v1?client_secret=x",
            "https://host/v1?subscription-key=x",
            "https://host/v1?api%5Fkey=x",
            "https://host/v1;a=1?a=1;auth=x",
            "https://host/v1#access_token=x"
        }) {
            assertThat(EndpointUrls.carriesCredentials(URI.create(url))).as(url).isTrue();
            assertThat(EndpointUrls.credentialsProblem(URI.create(url)))
                    .contains("'url' must not carry credentials; put the key in the variable api_key_env names");
        }
    }

    @Test
    void ordinaryEndpointsAreAccepted() {
        for (String url : new String[] {
            "https://api.openai.com/v1/chat/completions",
            "http://127.0.0.1:8080/v1/chat/completions?api-version=2024-06-01",
            "https://host/v1?keyboard=1&monkey=2&key",
            "https://host/keys/token/v1#section"
        }) {
            assertThat(EndpointUrls.carriesCredentials(URI.create(url))).as(url).isFalse();
            assertThat(EndpointUrls.credentialsProblem(URI.create(url))).isEmpty();
        }
    }
}
