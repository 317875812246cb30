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
 * The server's HTTP endpoints against the pages that describe them: every endpoint the server routes is named in
 * docs/server.md or docs/forward-auth.md as {@code METHOD /path}, and every endpoint those pages name is one that a
 * port of the server routes.
 */
class HttpApiReferenceTest {

    private static final List<String> PAGES = List.of("docs/server.md", "docs/forward-auth.md");

    /**
     * An endpoint as the pages write it, in backticks: {@code `GET /admin/top?policy=P...`}, or an API's path
     * alone where any method is answered ({@code `/v1/forward-auth`}).
     */
    private static final Pattern ENDPOINT = Pattern.compile(
            "`(?:(?:GET|POST|DELETE|PUT)(?:, [A-Z]+)* )?(/(?:v1|admin|healthz|readyz|metrics)[^`?\\s]*)");

    /** Every path a port of the server routes, its parameters written as the pages write them. */
    private static final Set<String> ROUTED = Set.of(
            "/v1/check",
            "/v1/charge",
            "/healthz",
            "/readyz",
            "/metrics",
            ForwardAuth.PATH,
            AdminApi.POLICIES,
            AdminApi.RELOAD,
            AdminApi.TOP,
            AdminApi.RATES,
            AdminApi.STORE,
            AdminApi.BUCKETS + "{policy}/{key}",
            AdminApi.BUCKETS + "{policy}");

    @Test
    void everyEndpointTheServerRoutesIsDocumented() throws Exception {
        Set<String> documented = documented();

        assertThat(documented).containsAll(ROUTED);
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
