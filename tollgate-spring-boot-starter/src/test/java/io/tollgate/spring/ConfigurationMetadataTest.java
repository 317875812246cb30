package io.tollgate.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.tollgate.fixtures.DocumentationExamples;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
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

    @Test
    void everyPropertyOfTheMetadataIsOnTheConfigurationPage() throws Exception {
        String metadata;
        try (InputStream in =
                getClass().getClassLoader().getResourceAsStream("META-INF/spring-configuration-metadata.json")) {
            metadata = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        String page = Files.readString(DocumentationExamples.PROJECT.resolve("docs/configuration.md"));
        Matcher property =
                Pattern.compile("\"name\": \"tollgate\\.([a-z0-9.-]+)\"").matcher(metadata);
        List<String> properties = new ArrayList<>();
        while (property.find()) {
            properties.add(property.group(1));
        }

        assertThat(properties).hasSizeGreaterThan(25);
        // Spring spells groupIpv6By64 group-ipv6-by64 and binds group-ipv6-by-64 too: it ignores dashes
        String dashless = page.replace("-", "");
        for (String name : properties) {
            // a shared key as the server's file names it, or a starter key with its prefix
            String key = name.replace("-", "");
            assertThat(dashless.contains("`" + key) || dashless.contains("`tollgate." + key))
                    .as("tollgate.%s is on docs/configuration.md", name)
                    .isTrue();
        }
    }
}
