package io.tollgate.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.tollgate.fixtures.DocumentationExamples;
import java.nio.file.Files;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The server's HTTP endpoints against the pages that describe them: every endpoint the server lists on its ports
 * (their 404 names them all) is named in docs/server.md or docs/forward-auth.md as {@code METHOD /path}, and every
 * endpoint those pages name is one that a port of the server routes.
 */
class HttpApiReferenceTest {

    private static final List<String> PAGES = List.of("docs/server.md", "docs/forward-auth.md");

    /**
     * An endpoint as the pages write it, in backticks: {@code `GET /admin/top?policy=P...`}, or an API's path
     * alone where any method is answered ({@code `/v1/forward-auth`}).
     */
    private static final Pattern ENDPOINT = Pattern.compile(
            "`(?:(?:GET|POST|DELETE|PUT)(?:, [A-Z]+)* )?(/(?:v1|admin|healthz|readyz|metrics)[^`?\\s]*)");

    /** A path in the server's own list of its endpoints: {@code /admin/buckets/{policy}/{key}}. */
    private static final Pattern LISTED = Pattern.compile("(/[a-z0-9{}/-]+[a-z}])");

    @Test
    void everyEndpointTheServerRoutesIsDocumented() throws Exception {
        Set<String> documented = documented();
        Set<String> routed = routed();

        assertThat(routed).contains("/v1/check", "/v1/charge", "/metrics", AdminApi.BUCKETS + "{policy}/{key}");
        assertThat(documented).containsAll(routed);
    }

    @Test
    void everyDocumentedEndpointIsRoutedByAPort() throws Exception {
        for (String path : documented()) {
            String concrete = path.replace("{policy}", "per-client").replace("{key}", "alice");

            assertThat(routed(concrete))
                    .as("a port of the server routes %s", path)
                    .isTrue();
        }
    }

    /**
     * Every endpoint the server names when a path is none of its own (the 404 of each port, which lists them all),
     * and the forward-auth endpoint, which answers where the file turns it on.
     */
    private static Set<String> routed() {
        Listeners.PublicExposure exposed = new Listeners.PublicExposure(true, true, true);
        Set<String> paths = new TreeSet<>(Set.of(ForwardAuth.PATH));
        for (Routes.Port port : Routes.Port.values()) {
            Matcher path = LISTED.matcher(Routes.noSuchEndpoint("/nothing-here", port, exposed));
            while (path.find()) {
                if (!path.group(1).equals("/nothing-here")) {
                    paths.add(path.group(1));
                }
            }
        }
        return paths;
    }

    private static boolean routed(String path) {
        Listeners.PublicExposure exposed = new Listeners.PublicExposure(true, true, true);
        return Routes.managementRoute(path) != Route.NONE
                || Routes.decisionRoute(path) != Route.NONE
                || Routes.publicRoute(path, exposed, false, true) != Route.NONE;
    }

    private static Set<String> documented() throws Exception {
        Set<String> paths = new TreeSet<>();
        for (String page : PAGES) {
            Matcher endpoint = ENDPOINT.matcher(Files.readString(DocumentationExamples.PROJECT.resolve(page)));
            while (endpoint.find()) {
                paths.add(endpoint.group(1));
            }
        }
        return paths;
    }
}
