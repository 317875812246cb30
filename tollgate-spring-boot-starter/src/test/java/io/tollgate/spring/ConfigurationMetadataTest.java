package io.tollgate.spring;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** The metadata that IDEs complete tollgate.* keys from, generated from TollgateProperties by the build. */
class ConfigurationMetadataTest {

    @Test
    void everyGroupOfPropertiesIsDescribed() throws Exception {
        String metadata;
        try (InputStream in =
                getClass().getClassLoader().getResourceAsStream("META-INF/spring-configuration-metadata.json")) {
            assertThat(in).as("the generated metadata is on the class path").isNotNull();
            metadata = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }

        assertThat(metadata)
                .contains(
                        "\"name\": \"tollgate.policies\"",
                        "\"name\": \"tollgate.rules\"",
                        "\"name\": \"tollgate.client-ip.trusted-proxies\"",
                        "\"name\": \"tollgate.redis.uri\"",
                        "\"name\": \"tollgate.redis.failure-policy\"",
                        "\"name\": \"tollgate.filter.order\"",
                        "\"name\": \"tollgate.responses.refusal-status\"")
                .contains("The policies by name: each a list of limits, all checked together.");
    }
}
