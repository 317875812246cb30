package io.tollgate.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.tollgate.config.ConfigSection;
import io.tollgate.fixtures.DocumentationExamples;
import io.tollgate.http.ConfigSchema;
import io.tollgate.internal.store.MemoryStoreProvider;
import io.tollgate.redis.internal.RedisSettings;
import io.tollgate.top.TopKeysSettings;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The metadata that IDEs complete tollgate.* keys from, generated from TollgateProperties by the build. */
class ConfigurationMetadataTest {

    /** The settings whose values are lists or maps of sections, which the metadata names whole. */
    private static final Set<String> LISTS_AND_MAPS = Set.of("policies", "concurrency-limits", "rules");

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
        for (String name : properties) {
            // a shared key as the server's file names it, or a starter key with its prefix
            assertThat(page.contains("`" + name) || page.contains("`tollgate." + name))
                    .as("tollgate.%s is on docs/configuration.md", name)
                    .isTrue();
        }
    }

    @Test
    void theMetadataNamesEverySharedSettingAsTheSchemaDoesAndNoOtherButTheStartersOwn() throws Exception {
        Set<String> shared = new TreeSet<>();
        names("tollgate", ConfigSchema.RULES, shared);
        names("tollgate.redis", RedisSettings.SECTION, shared);
        names("tollgate.memory", MemoryStoreProvider.SCHEMA, shared);
        names("tollgate.top-keys", TopKeysSettings.SCHEMA, shared);

        Set<String> inMetadata = new TreeSet<>(metadataNames());
        Set<String> startersOwn = new TreeSet<>(inMetadata);
        startersOwn.removeAll(shared);

        assertThat(inMetadata)
                .as("every shared setting, spelt as the schema spells it")
                .containsAll(shared);
        assertThat(startersOwn)
                .as("the starter's own settings, which no file has")
                .containsExactlyInAnyOrder(
                        "tollgate.enabled",
                        "tollgate.store",
                        "tollgate.warm-up",
                        "tollgate.redis.use-application-redis",
                        "tollgate.filter.order",
                        "tollgate.filter.url-patterns",
                        "tollgate.gateway.gateway-headers");
    }

    @Test
    void eachBeanOfASharedSectionHasAPropertyForEveryKeyOfItsSchemaAndNoOther() {
        Map<Class<?>, Set<String>> sections = new LinkedHashMap<>();
        sections.put(TollgateProperties.Policy.class, ConfigSchema.POLICY.keys());
        sections.put(TollgateProperties.Limit.class, ConfigSchema.LIMIT.keys());
        sections.put(TollgateProperties.Quota.class, ConfigSchema.QUOTA.keys());
        sections.put(TollgateProperties.ConcurrencyLimit.class, ConfigSchema.CONCURRENCY_LIMIT.keys());
        sections.put(TollgateProperties.Rule.class, ConfigSchema.RULE.keys());
        sections.put(TollgateProperties.PolicyFrom.class, ConfigSchema.POLICY_FROM.keys());
        sections.put(TollgateProperties.ResponseCost.class, ConfigSchema.RESPONSE_COST.keys());
        sections.put(TollgateProperties.ClientIp.class, ConfigSchema.CLIENT_IP.keys());
        sections.put(TollgateProperties.Responses.class, ConfigSchema.RESPONSES.keys());
        sections.put(TollgateProperties.Memory.class, MemoryStoreProvider.SCHEMA.keys());
        sections.put(TollgateProperties.TopKeys.class, TopKeysSettings.SCHEMA.keys());
        Set<String> redis = new TreeSet<>(RedisSettings.SECTION.keys());
        redis.add("use-application-redis"); // the starter's own
        sections.put(TollgateProperties.Redis.class, redis);

        sections.forEach((bean, keys) -> assertThat(properties(bean))
                .as("the properties of %s", bean.getSimpleName())
                .containsExactlyInAnyOrderElementsOf(
                        keys.stream().map(key -> key.replace("-", "")).toList()));
    }

    /** Returns the properties of {@code bean} as Spring binds them: lower case, without dashes. */
    private static List<String> properties(Class<?> bean) {
        return Arrays.stream(bean.getRecordComponents())
                .map(component -> component.getName().toLowerCase(Locale.ROOT))
                .toList();
    }

    /** Adds the names of {@code section}'s settings under {@code prefix}; an IDE completes inside lists and maps. */
    private static void names(String prefix, ConfigSection section, Set<String> names) {
        for (String key : section.keys()) {
            ConfigSection values = section.section(key);
            if (values == null || LISTS_AND_MAPS.contains(key)) {
                names.add(prefix + "." + key);
            } else {
                names(prefix + "." + key, values, names);
            }
        }
    }

    private List<String> metadataNames() throws Exception {
        String metadata;
        try (InputStream in =
                getClass().getClassLoader().getResourceAsStream("META-INF/spring-configuration-metadata.json")) {
            metadata = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        // the properties, not the groups before them nor the hints after
        metadata = metadata.substring(metadata.indexOf("\"properties\""), metadata.indexOf("\"hints\""));
        Matcher property =
                Pattern.compile("\"name\": \"(tollgate\\.[a-z0-9.-]+)\"").matcher(metadata);
        List<String> names = new ArrayList<>();
        while (property.find()) {
            names.add(property.group(1));
        }
        return names;
    }
}
