package io.tollgate.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.tollgate.fixtures.DocumentationExamples;
import java.nio.file.Files;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Keeps docs/spring-boot.md true to examples/spring-boot-app, which the build compiles and whose own test,
 * OrdersApplicationTest, calls every endpoint the page shows: each Java example must be in the example's
 * controller (the WebFlux one in the reactive test application, which ReactiveApplicationTest calls), and
 * the YAML must be the example's application.yml.
 */
class SpringBootDocumentationTest {

    private static final String PAGE = "docs/spring-boot.md";
    private static final String EXAMPLE = "examples/spring-boot-app/src/main/";

    @Test
    void everyJavaExampleIsInTheExampleApplication() {
        int examples =
                DocumentationExamples.assertRunBy(EXAMPLE + "java/com/example/orders/OrderController.java", PAGE);

        assertThat(examples).isEqualTo(3);
    }

    @Test
    void theYamlIsTheExampleApplicationsOwn() throws Exception {
        List<String> files = DocumentationExamples.blocks(PAGE, "yaml");
        String applicationYml =
                Files.readString(DocumentationExamples.PROJECT.resolve(EXAMPLE + "resources/application.yml"));

        assertThat(files).hasSize(1);
        assertThat(applicationYml).startsWith(files.get(0));
    }
}
