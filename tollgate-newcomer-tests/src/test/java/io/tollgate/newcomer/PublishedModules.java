package io.tollgate.newcomer;

import io.tollgate.fixtures.DocumentationExamples;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** What the build publishes, read from its poms: the modules a user can depend on. */
final class PublishedModules {

    private PublishedModules() {}

    /** The artifact ids of the reactor's jar modules that are installed and deployed. */
    static List<String> jars() {
        List<String> published = new ArrayList<>();
        Matcher module = Pattern.compile("<module>([^<]+)</module>").matcher(read(Path.of("pom.xml")));
        while (module.find()) {
            String pom = read(Path.of(module.group(1), "pom.xml"));
            if (!pom.contains("<packaging>pom</packaging>")
                    && !pom.contains("<maven.install.skip>true</maven.install.skip>")) {
                published.add(module.group(1));
            }
        }
        return published;
    }

    /** The version the build gives every module: the revision property of the BOM. */
    static String version() {
        Matcher revision =
                Pattern.compile("<revision>([^<]+)</revision>").matcher(read(Path.of("tollgate-bom/pom.xml")));
        if (!revision.find()) {
            throw new AssertionError("tollgate-bom/pom.xml has no revision property");
        }
        return revision.group(1);
    }

    /** A file of the project, by its path from the project's root. */
    static String read(Path path) {
        try {
            return Files.readString(DocumentationExamples.PROJECT.resolve(path));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
