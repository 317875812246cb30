package io.tollgate.spring.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import io.tollgate.fixtures.DocumentationExamples;
import java.nio.file.Files;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Keeps docs/spring-cloud-gateway.md true to the gateway the tests run: its key resolver is the test
 * application's, its route and policy are application-gateway.yml's, and its migration snippet's arguments are
 * those of the route GatewayMigrationTest migrates, and its complete pom.xml names the versions the build runs.
 */
class GatewayDocumentationTest {

    private static final String PAGE = "docs/spring-cloud-gateway.md";

    @Test
    void theJavaExampleIsTheTestApplicationsKeyResolver() {
        int examples = DocumentationExamples.assertRunBy(
                "tollgate-spring-cloud-gateway/src/test/java/io/tollgate/spring/gateway/testapp/"
                        + "GatewayTestApplication.java",
                PAGE);

        assertThat(examples).isEqualTo(1);
    }

    @Test
    void theRouteWithSeveralLimitsIsTheTestedOne() throws Exception {
        List<String> yaml = DocumentationExamples.blocks(PAGE, "yaml");
        String tested = Files.readString(DocumentationExamples.PROJECT.resolve(
                "tollgate-spring-cloud-gateway/src/test/resources/application-gateway.yml"));

        assertThat(yaml).hasSize(2);
        String shown = yaml.get(1);
        int route = shown.indexOf("            - id: reports");
        int policies = shown.indexOf("tollgate:\n");
        assertThat(tested)
                .as("the routes' header, the route and the policy are the tested file's")
                .startsWith(shown.substring(0, route))
                .contains(shown.substring(route, policies))
                .endsWith(shown.substring(policies));
    }

    @Test
    void theCompletePomNamesTheVersionsTheBuildRuns() throws Exception {
        List<String> poms = DocumentationExamples.blocks(PAGE, "xml");
        String bootVersion = property("pom.xml", "spring-boot.version");
        String cloudVersion = property("tollgate-spring-cloud-gateway/pom.xml", "spring-cloud.version");
        String tollgateVersion = property("tollgate-bom/pom.xml", "revision");

        assertThat(poms).hasSize(1);
        String pom = poms.get(0).replaceAll("\\s+", " ");
        assertThat(pom)
                .startsWith("<?xml")
                .contains("<parent> <groupId>org.springframework.boot</groupId> <artifactId>spring-boot-starter-parent"
                        + "</artifactId> <version>" + bootVersion + "</version>")
                .contains("<spring-cloud.version>" + cloudVersion + "</spring-cloud.version>")
                .contains("<artifactId>spring-cloud-dependencies</artifactId> <version>${spring-cloud.version}"
                        + "</version> <type>pom</type> <scope>import</scope>")
                .contains("<artifactId>spring-cloud-starter-gateway-server-webflux</artifactId>")
                .contains("<groupId>io.tollgate</groupId> <artifactId>tollgate-spring-cloud-gateway</artifactId>"
                        + " <version>" + tollgateVersion + "</version>")
                .endsWith("</project> ");
    }

    /** The value of a property of one of the build's poms (relative to the project's root). */
    private static String property(String pom, String name) throws Exception {
        Matcher value = Pattern.compile("<" + Pattern.quote(name) + ">([^<]+)</")
                .matcher(Files.readString(DocumentationExamples.PROJECT.resolve(pom)));
        assertThat(value.find()).as(name + " in " + pom).isTrue();
        return value.group(1);
    }

    @Test
    void theMigrationSnippetIsTheRouteGatewayMigrationTestMigrates() {
        String snippet = DocumentationExamples.blocks(PAGE, "yaml").get(0);
        List<String> arguments = GatewayMigrationTest.routeWithRedisRateLimiter().stream()
                .filter(line -> line.contains(".args.redis-rate-limiter.") || line.contains(".args.key-resolver="))
                .map(line -> line.substring(line.indexOf(".args.") + ".args.".length()))
                .toList();

        assertThat(arguments).hasSize(4);
        assertThat(snippet).contains("rate-limiter: \"#{@tollgateRateLimiter}\"     # was \"#{@redisRateLimiter}\"");
        for (String argument : arguments) {
            String[] nameAndValue = argument.split("=", 2);
            String value = nameAndValue[1].startsWith("#") ? "\"" + nameAndValue[1] + "\"" : nameAndValue[1];
            assertThat(snippet).as(argument).contains(nameAndValue[0] + ": " + value);
        }
    }
}
