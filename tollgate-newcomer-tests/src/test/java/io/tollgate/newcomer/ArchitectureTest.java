package io.tollgate.newcomer;

import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.core.domain.Dependency;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import io.tollgate.fixtures.DocumentationExamples;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The modules' boundaries, held by the build: no module reaches into another's {@code internal} packages, no main
 * source file runs past {@value #MOST_LINES} lines, and no packages depend on each other in a cycle. Read from the
 * compiled classes of each published module ({@code target/classes}: the reactor builds them before these tests)
 * and from its sources.
 */
class ArchitectureTest {

    private static final int MOST_LINES = 400;

    private static final Map<String, JavaClasses> CLASSES_BY_MODULE = new TreeMap<>();

    @BeforeAll
    static void importTheModules() {
        for (String module : PublishedModules.jars()) {
            Path classes = DocumentationExamples.PROJECT.resolve(module).resolve("target/classes");
            assertThat(classes).as("%s is built", module).isDirectory();
            CLASSES_BY_MODULE.put(module, new ClassFileImporter().importPath(classes));
        }
    }

    @Test
    void noModuleUsesAnotherModulesInternalPackages() {
        Map<String, String> moduleOf = new HashMap<>();
        CLASSES_BY_MODULE.forEach((module, classes) -> classes.forEach(c -> moduleOf.put(c.getName(), module)));
        Set<String> uses = new TreeSet<>();
        CLASSES_BY_MODULE.forEach((module, classes) -> {
            for (JavaClass user : classes) {
                for (Dependency dependency : user.getDirectDependenciesFromSelf()) {
                    JavaClass used = dependency.getTargetClass().getBaseComponentType();
                    String owner = moduleOf.get(used.getName());
                    if (owner != null && !owner.equals(module) && isInternal(used.getPackageName())) {
                        uses.add(module + " -> " + used.getPackageName());
                    }
                }
            }
        });

        assertThat(uses).as("a module's use of another's internal packages").isEmpty();
    }

    @Test
    void noMainSourceFileIsLongerThan400Lines() throws IOException {
        Set<String> longFiles = new TreeSet<>();
        for (String module : CLASSES_BY_MODULE.keySet()) {
            Path sources = DocumentationExamples.PROJECT.resolve(module).resolve("src/main/java");
            try (Stream<Path> files = Files.walk(sources)) {
                for (Path file :
                        files.filter(f -> f.toString().endsWith(".java")).toList()) {
                    if (Files.readAllLines(file).size() > MOST_LINES) {
                        longFiles.add(DocumentationExamples.PROJECT
                                .relativize(file)
                                .toString()
                                .replace('\\', '/'));
                    }
                }
            }
        }

        assertThat(longFiles).as("main source files over %d lines", MOST_LINES).isEmpty();
    }

    @Test
    void noPackagesDependOnEachOtherInACycle() {
        Map<String, Set<String>> arrows = new TreeMap<>();
        CLASSES_BY_MODULE
                .values()
                .forEach(classes -> classes.forEach(user -> {
                    String from = user.getPackageName();
                    arrows.computeIfAbsent(from, p -> new TreeSet<>());
                    for (Dependency dependency : user.getDirectDependenciesFromSelf()) {
                        String to = dependency
                                .getTargetClass()
                                .getBaseComponentType()
                                .getPackageName();
                        if (to.startsWith("io.tollgate") && !to.equals(from)) {
                            arrows.get(from).add(to);
                        }
                    }
                }));

        assertThat(cycles(arrows))
                .as("groups of packages that depend on each other in a cycle")
                .isEmpty();
    }

    private static boolean isInternal(String packageName) {
        return packageName.endsWith(".internal") || packageName.contains(".internal.");
    }

    /** The strongly connected groups of more than one package (Tarjan's algorithm), each as its sorted packages. */
    private static Set<String> cycles(Map<String, Set<String>> arrows) {
        Map<String, Integer> index = new HashMap<>();
        Map<String, Integer> low = new HashMap<>();
        Deque<String> stack = new ArrayDeque<>();
        Set<String> onStack = new TreeSet<>();
        Set<String> groups = new TreeSet<>();
        int[] next = {0};
        for (String start : arrows.keySet()) {
            if (!index.containsKey(start)) {
                connect(start, arrows, index, low, stack, onStack, groups, next);
            }
        }
        return groups;
    }

    private static void connect(
            String node,
            Map<String, Set<String>> arrows,
            Map<String, Integer> index,
            Map<String, Integer> low,
            Deque<String> stack,
            Set<String> onStack,
            Set<String> groups,
            int[] next) {
        index.put(node, next[0]);
        low.put(node, next[0]);
        next[0]++;
        stack.push(node);
        onStack.add(node);
        for (String to : arrows.getOrDefault(node, Set.of())) {
            if (!index.containsKey(to)) {
                connect(to, arrows, index, low, stack, onStack, groups, next);
                low.put(node, Math.min(low.get(node), low.get(to)));
            } else if (onStack.contains(to)) {
                low.put(node, Math.min(low.get(node), index.get(to)));
            }
        }
        if (low.get(node).equals(index.get(node))) {
            List<String> group = new ArrayList<>();
            String member;
            do {
                member = stack.pop();
                onStack.remove(member);
                group.add(member);
            } while (!member.equals(node));
            if (group.size() > 1) {
                groups.add(String.join(", ", new TreeSet<>(group)));
            }
        }
    }
}
