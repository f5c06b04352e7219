package dev.vigilo.common.errors;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class SecretsTest {
    @Test
    void masksUserInfoPasswords() {
        assertThat(Secrets.mask("mysql://u:S3cretPW@h/db")).isEqualTo("mysql://u:***@h/db");
        assertThat(Secrets.mask("bad url 'jdbc:postgresql://u:Pw@127.0.0.1:1/v' and again jdbc:postgresql://u:Pw@h/v"))
                .isEqualTo("bad url 'jdbc:postgresql://u:***@127.0.0.1:1/v' and again jdbc:postgresql://u:***@h/v");
        assertThat(Secrets.mask("s3://key:se@cret@bucket/prefix")).isEqualTo("s3://key:***@bucket/prefix");
    }

    @Test
    void masksPasswordParameters() {
        assertThat(Secrets.mask("jdbc:postgresql://h/db?user=u&password=p%40ss&sslpassword=k&ssl=true"))
                .isEqualTo("jdbc:postgresql://h/db?user=u&password=***&sslpassword=***&ssl=true");
        assertThat(Secrets.mask("jdbc:postgresql://h/db;PASSWORD=x;user=u"))
                .isEqualTo("jdbc:postgresql://h/db;PASSWORD=***;user=u");
    }

    @Test
    void leavesTextWithoutSecretsAlone() {
        for (String text : new String[] {
            "jdbc:postgresql://h:5432/db?user=u", "user@example.com wrote s3://bucket/a:b", "http://host:9000/x", ""
        }) {
            assertThat(Secrets.mask(text)).isEqualTo(text);
        }
        assertThat(Secrets.mask(null)).isNull();
    }
}
