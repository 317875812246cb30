package io.tollgate.server;

import io.tollgate.server.CheckApi.Answer;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Map;

/**
 * The management port's live page: {@code /} and the script and style it loads ({@code /page.js}, {@code
 * /page.css}), served from the jar as they are, with no token: they hold no data. The page asks the admin API
 * for everything it shows, with the token the operator types in (kept in the tab's {@code sessionStorage}
 * only). The content security policy lets it load nothing but those files and talk to nothing but its own
 * port. Stateless and thread-safe.
 */
final class ManagementPage {

    private static final String SECURITY = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src"
            + " 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

    private static final Answer PAGE = load("management-page.html", "text/html; charset=utf-8");
    private static final Answer SCRIPT = load("management-page.js", "text/javascript; charset=utf-8");
    private static final Answer STYLE = load("management-page.css", "text/css; charset=utf-8");

    private ManagementPage() {}

    /** Whether {@code path} is one of the page's. */
    static boolean serves(String path) {
        return path.equals("/") || path.equals("/page.js") || path.equals("/page.css");
    }

    /** Answers a GET or HEAD of one of the page's paths. */
    static Answer answer(String path) {
        return switch (path) {
            case "/" -> PAGE;
            case "/page.js" -> SCRIPT;
            case "/page.css" -> STYLE;
            default -> throw new IllegalArgumentException("not a path of the page: " + path);
        };
    }

    private static Answer load(String resource, String contentType) {
        try (InputStream in = ManagementPage.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalStateException("the jar lacks " + resource);
            }
            return new Answer(
                    200,
                    Map.of(
                            "Content-Type", contentType,
                            "Cache-Control", "no-cache",
                            "X-Content-Type-Options", "nosniff",
                            "Referrer-Policy", "no-referrer",
                            "Content-Security-Policy", SECURITY),
                    in.readAllBytes());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
