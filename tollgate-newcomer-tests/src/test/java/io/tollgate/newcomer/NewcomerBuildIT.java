package io.tollgate.newcomer;

import static org.assertj.core.api.Assertions.assertThat;

import io.tollgate.fixtures.DocumentationExamples;
import io.tollgate.testing.TestDepth;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.module.ModuleDescriptor;
import java.lang.module.ModuleFinder;
import java.lang.module.ModuleReference;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The newcomer's path, taken as README.md describes it: Tollgate's artifacts in a local repository of the
 * newcomer's own, empty at first; then a new project outside the repository that imports the BOM and names the
 * modules exactly as the README's snippet does, with the README's quick start as its program, built by Maven
 * and run. In the usual build that repository holds what this build's modules packaged, laid out as {@code
 * install} lays them out (each module's jar, sources, javadoc and its pom with the version resolved); the deep
 * run ({@code -Pdeep}) installs a copy of this repository (its files, not its build output) with the README's
 * own install command instead. What is not Tollgate's the builds read from the usual local repository, where
 * this build has just put it (what this build did not need, such as the install plugin, they fetch as a user's
 * build would).
 */
class NewcomerBuildIT {

    private static final String VERSION = System.getProperty("tollgate.version");
    private static final Path USUAL_REPOSITORY = Path.of(System.getProperty("newcomer.maven.repository"));

    @TempDir
    static Path newcomer;

    private static Path repository;

    @BeforeAll
    static void tollgateIsInARepositoryOfTheNewcomersOwn() throws IOException {
        repository = newcomer.resolve("repository");
        String install = readmeBlock("sh", " install ").strip();
        assertThat(install).as("the README's install command").startsWith("./mvnw ");
        if (TestDepth.deep()) {
            installACopyOfTheRepositoryAsTheReadmeSays(install);
        } else {
            layOutThisBuildsArtifactsAsInstallDoes();
        }
    }

    private static void installACopyOfTheRepositoryAsTheReadmeSays(String install) throws IOException {
        Path clone = copyOfTheRepository(newcomer.resolve("tollgate"));
        List<String> command = new ArrayList<>(List.of(install.split(" ")));
        command.set(0, clone.resolve("mvnw").toString());
        command.addAll(repositories(repository));
        Run build = run(clone, command);

        assertThat(build.exitCode())
                .as("%s in a copy of the repository:%n%s", install, build.output())
                .isZero();
    }

    /**
     * Lays out what this build's modules packaged (the reactor builds this module last) as {@code install} would:
     * each published module's jar, sources and javadoc, and the poms the flatten plugin resolved, the BOM's and
     * the parent's included.
     */
    private static void layOutThisBuildsArtifactsAsInstallDoes() throws IOException {
        Path project = DocumentationExamples.PROJECT.toAbsolutePath().normalize();
        copyPom(project.resolve("tollgate-bom/target"), "tollgate-bom");
        copyPom(project.resolve("target"), "tollgate-parent");
        for (String module : PublishedModules.jars()) {
            Path target = project.resolve(module).resolve("target");
            copyPom(target, module);
            for (String suffix : List.of(".jar", "-sources.jar", "-javadoc.jar")) {
                String name = module + "-" + VERSION + suffix;
                Path packaged = target.resolve(name);
                assertThat(packaged)
                        .as("%s, which this build packages before it runs this test (./mvnw -B verify)", packaged)
                        .exists();
                Files.copy(packaged, installed(module).resolve(name));
            }
        }
    }

    private static void copyPom(Path target, String module) throws IOException {
        Path pom = target.resolve(".flattened-pom.xml");
        assertThat(pom)
                .as("%s, the pom with its version resolved, written when %s is built", pom, module)
                .exists();
        Files.createDirectories(installed(module));
        Files.copy(pom, installed(module).resolve(module + "-" + VERSION + ".pom"));
    }

    @Test
    void everyPublishedModuleIsInstalledWithItsVersionSourcesAndJavadoc() throws IOException {
        for (String module : PublishedModules.jars()) {
            Path installed = installed(module);

            assertThat(Files.readString(installed.resolve(module + "-" + VERSION + ".pom")))
                    .as("the installed pom of %s", module)
                    .doesNotContain("${revision}")
                    .contains("<version>" + VERSION + "</version>");
            assertThat(installed.resolve(module + "-" + VERSION + ".jar")).exists();
            assertThat(installed.resolve(module + "-" + VERSION + "-sources.jar"))
                    .exists();
            assertThat(installed.resolve(module + "-" + VERSION + "-javadoc.jar"))
                    .exists();
        }
        assertThat(Files.readString(installed("tollgate-parent").resolve("tollgate-parent-" + VERSION + ".pom")))
                .doesNotContain("${revision}");
    }

    @Test
    void everyPublishedJarIsANamedModuleThatOwnsItsPackages() {
        List<Path> jars = PublishedModules.jars().stream()
                .map(module -> installed(module).resolve(module + "-" + VERSION + ".jar"))
                .toList();

        ModuleFinder finder = ModuleFinder.of(jars.toArray(Path[]::new));
        Set<ModuleReference> modules = finder.findAll();
        List<String> names =
                modules.stream().map(module -> module.descriptor().name()).toList();

        assertThat(modules).hasSameSizeAs(jars);
        // No package is held by two of them, which would keep them from being resolved together; and what they
        // require of Tollgate is among them (the rest, such as Caffeine or Lettuce, their dependencies bring).
        Map<String, String> owners = new HashMap<>();
        for (ModuleReference module : modules) {
            for (String pkg : module.descriptor().packages()) {
                assertThat(owners.put(pkg, module.descriptor().name()))
                        .as(
                                "another module holding package %s of %s",
                                pkg, module.descriptor().name())
                        .isNull();
            }
            assertThat(module.descriptor().requires())
                    .map(ModuleDescriptor.Requires::name)
                    .filteredOn(required -> required.startsWith("io.tollgate"))
                    .isSubsetOf(names);
        }
        for (ModuleReference module : modules) {
            String name = module.descriptor().name();
            assertThat(name).startsWith("io.tollgate");
            assertThat(module.descriptor().packages())
                    .as("the packages of module %s", name)
                    .allMatch(pkg -> pkg.equals(name) || pkg.startsWith(name + "."));
        }
    }

    @Test
    void theInstalledBomManagesTollgatesModulesAndNothingElse() throws IOException {
        String bom = Files.readString(installed("tollgate-bom").resolve("tollgate-bom-" + VERSION + ".pom"));

        assertThat(bom).doesNotContain("<parent>");
        String managed = bom.substring(bom.indexOf("<dependencyManagement>"), bom.indexOf("</dependencyManagement>"));
        assertThat(managed).doesNotContain("${");
        assertThat(values(managed, "groupId")).containsOnly("io.tollgate");
        assertThat(values(managed, "artifactId")).containsExactlyInAnyOrderElementsOf(PublishedModules.jars());
        assertThat(values(managed, "version")).containsOnly(VERSION);
    }

    @Test
    void aNewProjectWithTheReadmesCoordinatesBuildsAndRunsTheQuickStart() throws IOException {
        Path project = Files.createDirectories(newcomer.resolve("project"));
        Files.writeString(project.resolve("pom.xml"), newcomerPom(readmeBlock("xml", "tollgate-bom")));
        Path sources = Files.createDirectories(project.resolve("src/main/java"));
        Files.writeString(
                sources.resolve("Newcomer.java"), program("Newcomer", readmeBlock("java", "InMemoryRateLimiter")));

        List<String> command = new ArrayList<>();
        command.add(
                Path.of(System.getProperty("newcomer.maven.home"), "bin", "mvn").toString());
        command.addAll(List.of("-B", "-q", "compile", "dependency:build-classpath", "-Dmdep.outputFile=classpath.txt"));
        command.addAll(repositories(repository));
        Run build = run(project, command);
        assertThat(build.exitCode())
                .as("mvn compile in the new project:%n%s", build.output())
                .isZero();

        List<String> classpath =
                Arrays.asList(Files.readString(project.resolve("classpath.txt")).split(File.pathSeparator));
        assertThat(classpath.stream().filter(jar -> jar.contains("io/tollgate")))
                .as("Tollgate's jars on the new project's class path")
                .allMatch(jar -> Path.of(jar).startsWith(repository))
                .anyMatch(jar -> jar.endsWith("tollgate-core-" + VERSION + ".jar"))
                .anyMatch(jar -> jar.endsWith("tollgate-redis-" + VERSION + ".jar"));
        assertThat(classpath).anyMatch(jar -> jar.contains("io/lettuce/lettuce-core"));

        Run program = run(
                project,
                List.of(
                        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                        "-cp",
                        project.resolve("target/classes")
                                + File.pathSeparator
                                + String.join(File.pathSeparator, classpath),
                        "Newcomer"));
        assertThat(program.exitCode()).as(program.output()).isZero();
        assertThat(program.output())
                .contains("Tollgate keeps its buckets in this process's memory")
                // a fresh JVM loads the limiter's classes during the first decisions: on a busy machine the ten
                // took 115 ms, and the eleventh waited what was left of the 200 ms (as the README's comment says)
                .containsPattern("request 11: 429, retry after (200|1\\d\\d|[1-9]\\d?) ms")
                .doesNotContain("SLF4J")
                .doesNotContain("Exception");
    }

    /**
     * Maven's options for a build that installs into {@code local} and reads from it first, then from the usual
     * local repository (read only), then from Maven Central.
     */
    private static List<String> repositories(Path local) {
        return List.of("-Dmaven.repo.local=" + local, "-Dmaven.repo.local.tail=" + USUAL_REPOSITORY);
    }

    /** Copies the repository's files, without any build's output or Git's, into {@code target}. */
    private static Path copyOfTheRepository(Path target) throws IOException {
        Path project = DocumentationExamples.PROJECT.toAbsolutePath().normalize();
        try (Stream<Path> files = Files.walk(project)) {
            for (Path file : (Iterable<Path>) files::iterator) {
                Path relative = project.relativize(file);
                if (isOutput(relative)) {
                    continue;
                }
                Path copy = target.resolve(relative.toString());
                if (Files.isDirectory(file)) {
                    Files.createDirectories(copy);
                } else {
                    Files.copy(file, copy, StandardCopyOption.COPY_ATTRIBUTES);
                }
            }
        }
        return target;
    }

    private static boolean isOutput(Path relative) {
        for (Path name : relative) {
            String part = name.toString();
            if (part.equals("target") || part.equals(".git") || part.equals(".idea")) {
                return true;
            }
        }
        return false;
    }

    /** The project a newcomer writes: the README's snippet, and the plugin versions this build already has. */
    private static String newcomerPom(String coordinates) {
        return """
                <?xml version="1.0" encoding="UTF-8"?>
                <project xmlns="http://maven.apache.org/POM/4.0.0">
                  <modelVersion>4.0.0</modelVersion>
                  <groupId>com.example</groupId>
                  <artifactId>newcomer</artifactId>
                  <version>1.0</version>

                  <properties>
                    <maven.compiler.release>17</maven.compiler.release>
                    <project.build.sourceEncoding>UTF-8</project.build.sourceEncoding>
                  </properties>

                %s
                  <!-- the plugins the reactor already fetched -->
                  <build>
                    <pluginManagement>
                      <plugins>
                        <plugin>
                          <artifactId>maven-resources-plugin</artifactId>
                          <version>%s</version>
                        </plugin>
                        <plugin>
                          <artifactId>maven-compiler-plugin</artifactId>
                          <version>%s</version>
                        </plugin>
                        <plugin>
                          <artifactId>maven-dependency-plugin</artifactId>
                          <version>%s</version>
                        </plugin>
                      </plugins>
                    </pluginManagement>
                  </build>
                </project>
                """.formatted(
                        coordinates,
                        System.getProperty("newcomer.resources-plugin.version"),
                        System.getProperty("newcomer.compiler-plugin.version"),
                        System.getProperty("newcomer.dependency-plugin.version"));
    }

    /** A class whose main method is the example's code, after the example's own imports. */
    private static String program(String name, String example) {
        StringBuilder imports = new StringBuilder();
        StringBuilder body = new StringBuilder();
        for (String line : example.split("\n")) {
            (line.startsWith("import ") ? imports : body).append(line).append('\n');
        }
        return imports + "\npublic class " + name + " {\n    public static void main(String[] args) {\n" + body
                + "    }\n}\n";
    }

    private static String readmeBlock(String language, String containing) {
        return DocumentationExamples.blocks("README.md", language).stream()
                .filter(block -> block.contains(containing))
                .findFirst()
                .orElseThrow(() -> new AssertionError("README.md shows no " + language + " block with " + containing));
    }

    private static Path installed(String module) {
        return repository.resolve("io/tollgate").resolve(module).resolve(VERSION);
    }

    private static List<String> values(String xml, String element) {
        List<String> values = new ArrayList<>();
        Matcher value =
                Pattern.compile("<" + element + ">([^<]*)</" + element + ">").matcher(xml);
        while (value.find()) {
            values.add(value.group(1).strip());
        }
        return values;
    }

    private record Run(int exitCode, String output) {}

    private static Run run(Path directory, List<String> command) {
        try {
            Path output = Files.createTempFile(newcomer, "run", ".log");
            ProcessBuilder builder = new ProcessBuilder(command)
                    .directory(directory.toFile())
                    .redirectErrorStream(true)
                    .redirectOutput(output.toFile());
            builder.environment().put("JAVA_HOME", System.getProperty("java.home"));
            // nothing of the running build's Maven settings leaks into the newcomer's
            builder.environment().keySet().removeIf(name -> name.startsWith("MAVEN_") && !name.equals("MAVEN_OPTS"));
            Process process = builder.start();
            if (!process.waitFor(6, TimeUnit.MINUTES)) {
                process.destroyForcibly();
                throw new AssertionError("still running after 6 minutes: " + String.join(" ", command));
            }
            return new Run(process.exitValue(), Files.readString(output, StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted while running " + String.join(" ", command), e);
        }
    }
}
