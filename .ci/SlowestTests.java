import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Lists the slowest test classes of the last build, from the reports Surefire and Failsafe wrote under each
 * module's {@code target/}: run {@code java .ci/SlowestTests.java [count]} from the repository's root after
 * {@code ./mvnw -B verify} (or any part of it). Prints the time of each class, its module and its kind (unit
 * tests, integration tests), the slowest first, then the total per module.
 */
public class SlowestTests {

    private static final Pattern SUITE = Pattern.compile("<testsuite\\b[^>]*>");
    private static final Pattern NAME = Pattern.compile("\\bname=\"([^\"]*)\"");
    private static final Pattern TIME = Pattern.compile("\\btime=\"([0-9.,]*)\"");
    private static final Pattern TESTS = Pattern.compile("\\btests=\"([0-9]*)\"");

    record Suite(String module, String kind, String name, double seconds, int tests) {}

    public static void main(String[] args) throws IOException {
        int count = args.length > 0 ? Integer.parseInt(args[0]) : 25;
        Path root = Path.of(".");
        List<Suite> suites = new ArrayList<>();
        try (Stream<Path> files = Files.walk(root, 4)) {
            for (Path report : files.filter(SlowestTests::isReport).toList()) {
                Suite suite = read(root.relativize(report));
                if (suite != null) {
                    suites.add(suite);
                }
            }
        }
        if (suites.isEmpty()) {
            System.err.println("No test reports under */target/surefire-reports or */target/failsafe-reports:"
                    + " run ./mvnw -B verify (or one module's tests) first.");
            System.exit(1);
        }
        suites.sort(Comparator.comparingDouble(Suite::seconds).reversed());
        System.out.printf("The %d slowest test classes of %d:%n", Math.min(count, suites.size()), suites.size());
        for (Suite suite : suites.subList(0, Math.min(count, suites.size()))) {
            System.out.printf(
                    Locale.ROOT,
                    "%8.1f s  %-30s %-11s %s (%d tests)%n",
                    suite.seconds(),
                    suite.module(),
                    suite.kind(),
                    suite.name(),
                    suite.tests());
        }
        System.out.println();
        System.out.println("Time in tests per module (the classes' times added; the build's own time is more):");
        suites.stream()
                .collect(java.util.stream.Collectors.groupingBy(
                        Suite::module, java.util.TreeMap::new, java.util.stream.Collectors.summingDouble(Suite::seconds)))
                .forEach((module, seconds) -> System.out.printf(Locale.ROOT, "%8.1f s  %s%n", seconds, module));
    }

    private static boolean isReport(Path path) {
        String name = path.getFileName().toString();
        String parent = path.getParent() == null ? "" : path.getParent().getFileName().toString();
        return name.startsWith("TEST-")
                && name.endsWith(".xml")
                && (parent.equals("surefire-reports") || parent.equals("failsafe-reports"));
    }

    private static Suite read(Path report) throws IOException {
        String text;
        try (Stream<String> lines = Files.lines(report)) {
            text = lines.limit(3).reduce("", (a, b) -> a + b + "\n");
        }
        Matcher suite = SUITE.matcher(text);
        if (!suite.find()) {
            return null;
        }
        String tag = suite.group();
        Matcher name = NAME.matcher(tag);
        Matcher time = TIME.matcher(tag);
        Matcher tests = TESTS.matcher(tag);
        if (!name.find() || !time.find()) {
            return null;
        }
        String module = report.getName(0).toString();
        String kind = report.getParent().getFileName().toString().startsWith("failsafe") ? "integration" : "unit";
        return new Suite(
                module,
                kind,
                name.group(1),
                Double.parseDouble(time.group(1).replace(",", "")),
                tests.find() ? Integer.parseInt(tests.group(1)) : 0);
    }
}
