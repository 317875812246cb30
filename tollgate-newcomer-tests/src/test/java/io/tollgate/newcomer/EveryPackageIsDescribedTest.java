package io.tollgate.newcomer;

import static org.assertj.core.api.Assertions.assertThat;

import io.tollgate.fixtures.DocumentationExamples;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** Every package of every module's main sources says what it is for, in a package-info.java with Javadoc. */
class EveryPackageIsDescribedTest {

    @Test
    void everyMainPackageHasAPackageInfoWithJavadoc() throws IOException {
        List<Path> packages;
        List<Path> sources;
        try (Stream<Path> files = Files.walk(DocumentationExamples.PROJECT)) {
            sources = files.filter(file -> file.toString().endsWith(".java"))
                    .filter(file -> file.toString().contains("/src/main/java/"))
                    .filter(file -> !file.toString().contains("/target/"))
                    .toList();
        }
        // A module's descriptor sits above its packages, and says what the module is in its own Javadoc
        List<Path> descriptors = sources.stream()
                .filter(file -> file.getFileName().toString().equals("module-info.java"))
                .toList();
        packages = sources.stream()
                .filter(file -> !descriptors.contains(file))
                .map(Path::getParent)
                .distinct()
                .toList();

        for (Path descriptor : descriptors) {
            assertThat(Files.readString(descriptor))
                    .as("%s", descriptor)
                    .contains("/**")
                    .contains("module ");
        }
        assertThat(packages).hasSizeGreaterThanOrEqualTo(9);
        for (Path pkg : packages) {
            Path info = pkg.resolve("package-info.java");
            assertThat(info).as("package-info.java of %s", pkg).exists();
            assertThat(Files.readString(info)).as("%s", info).contains("/**").contains("package ");
        }
    }
}
