import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;

/**
 * A tiny upstream for the quick start: answers every request with a line naming its method and path.
 * Run it with the JDK alone: {@code java examples/DemoUpstream.java 9000}.
 */
public final class DemoUpstream {

    public static void main(String[] args) throws IOException {
        int port = args.length > 0 ? Integer.parseInt(args[0]) : 9000;
        HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", port), 0);
        server.createContext("/", exchange -> {
            exchange.getRequestBody().transferTo(OutputStream.nullOutputStream());
            byte[] body = ("hello from the upstream: " + exchange.getRequestMethod() + " "
                            + exchange.getRequestURI() + "\n")
                    .getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().set("Content-Type", "text/plain; charset=utf-8");
            exchange.sendResponseHeaders(200, body.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(body);
            }
        });
        server.start();
        System.out.println("demo upstream listening on http://127.0.0.1:" + port);
    }
}
