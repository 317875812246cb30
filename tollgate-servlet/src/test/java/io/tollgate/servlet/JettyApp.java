package io.tollgate.servlet;

import jakarta.servlet.AsyncContext;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.Filter;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.http.UriCompliance;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

/**
 * A real Jetty 12 application on a loopback port, protected by a {@link TollgateFilter}: every path answers
 * 200 with the dispatcher type it was served under in {@code X-Dispatch}; {@code /forward/**} forwards to the
 * same path under {@code /api}. Query parameters change the answer: {@code status=N} answers N, {@code
 * used=N} sets {@code X-Tokens-Used: N}, {@code async} answers from another thread after going asynchronous,
 * {@code fail=WHY} throws, {@code hold=NAME} waits until the test releases NAME. Requests are sent with a real HTTP client, or as raw bytes for requests that
 * a client library would refuse to send.
 */
final class JettyApp implements AutoCloseable {

    private final Server server;
    private final ServerConnector connector;
    private final HttpClient client = HttpClient.newBuilder()
            .connectTimeout(Duration.ofSeconds(5))
            .version(HttpClient.Version.HTTP_1_1)
            .build();
    private final AtomicInteger served = new AtomicInteger();
    private final Map<String, CountDownLatch> gates = new ConcurrentHashMap<>();
    private final Map<String, Semaphore> arrivals = new ConcurrentHashMap<>();

    private JettyApp(
            FilterHolder filter, boolean asyncServlet, Consumer<ServletContextHandler> customizer, int maxThreads)
            throws Exception {
        if (maxThreads > 0) {
            QueuedThreadPool threads = new QueuedThreadPool(maxThreads, 1);
            threads.setReservedThreads(0);
            server = new Server(threads);
            connector = new ServerConnector(server, 1, 1);
        } else {
            server = new Server();
            connector = new ServerConnector(server);
        }
        connector.setHost("127.0.0.1");
        connector.setPort(0);
        server.addConnector(connector);

        ServletContextHandler context = new ServletContextHandler("/");
        customizer.accept(context);
        if (filter != null) {
            filter.setAsyncSupported(true);
            context.addFilter(
                    filter, "/*", EnumSet.of(DispatcherType.REQUEST, DispatcherType.ASYNC, DispatcherType.FORWARD));
        }
        ServletHolder app = new ServletHolder(new HttpServlet() {
            @Override
            protected void service(HttpServletRequest request, HttpServletResponse response)
                    throws IOException, jakarta.servlet.ServletException {
                String path = request.getServletPath() + (request.getPathInfo() == null ? "" : request.getPathInfo());
                if (path.startsWith("/forward/")) {
                    request.getRequestDispatcher("/api/" + path.substring("/forward/".length()))
                            .forward(request, response);
                    return;
                }
                served.incrementAndGet();
                response.setHeader("X-Dispatch", request.getDispatcherType().name());
                if (param(request, "async") == null) {
                    holdIfAsked(request);
                }
                if (param(request, "fail") != null) {
                    throw new IllegalStateException("the application failed: " + param(request, "fail"));
                }
                if (param(request, "status") != null) {
                    response.setStatus(Integer.parseInt(param(request, "status")));
                }
                if (param(request, "used") != null) {
                    response.setHeader("X-Tokens-Used", param(request, "used"));
                }
                response.setContentType("text/plain");
                if (param(request, "async") != null) {
                    AsyncContext async = request.startAsync();
                    async.start(() -> {
                        try {
                            holdIfAsked(request);
                            async.getResponse().getWriter().write("later " + path);
                        } catch (IOException e) {
                            throw new UncheckedIOException(e);
                        } finally {
                            async.complete();
                        }
                    });
                    return;
                }
                response.getWriter().write("hello " + path);
            }
        });
        app.setAsyncSupported(asyncServlet);
        context.addServlet(app, "/*");
        server.setHandler(context);
        try {
            server.start();
        } catch (Exception e) {
            server.stop(); // a filter that failed to start must not leave the port and threads behind
            throw e;
        }
    }

    /** Starts an application whose servlet supports asynchronous processing. */
    static JettyApp start(Filter filter) throws Exception {
        return new JettyApp(new FilterHolder(filter), true, context -> {}, 0);
    }

    /**
     * Starts an application served by at most {@code maxThreads} threads, of which two accept and select:
     * few enough that requests blocking their threads would starve the server.
     */
    static JettyApp startWithThreads(Filter filter, int maxThreads) throws Exception {
        return new JettyApp(new FilterHolder(filter), true, context -> {}, maxThreads);
    }

    /**
     * Starts an application whose container passes every URI on to the filter, ambiguous ones too (Jetty's {@code
     * UNSAFE} URI compliance), as a container more lenient than Jetty's default would.
     */
    static JettyApp startAcceptingEveryUri(Filter filter) throws Exception {
        JettyApp app = new JettyApp(
                new FilterHolder(filter),
                true,
                context -> context.getServletHandler().setDecodeAmbiguousURIs(true),
                0);
        app.connector
                .getConnectionFactory(HttpConnectionFactory.class)
                .getHttpConfiguration()
                .setUriCompliance(UriCompliance.UNSAFE);
        return app;
    }

    /** Starts an application whose servlet does not support asynchronous processing. */
    static JettyApp startWithoutAsync(Filter filter) throws Exception {
        return new JettyApp(new FilterHolder(filter), false, context -> {}, 0);
    }

    /** Starts an application as {@code web.xml} would declare the filter: by class, with init parameters. */
    static JettyApp startDeclared(Map<String, String> initParameters, Consumer<ServletContextHandler> customizer)
            throws Exception {
        FilterHolder holder = new FilterHolder(TollgateFilter.class);
        holder.setName("tollgate");
        holder.setInitParameters(initParameters);
        return new JettyApp(holder, true, customizer, 0);
    }

    /** Starts an application that registers its filters itself, such as from a context listener. */
    static JettyApp startRegisteringItself(Consumer<ServletContextHandler> customizer) throws Exception {
        return new JettyApp(null, true, customizer, 0);
    }

    /**
     * Returns a query parameter as the raw query has it, or null: read by hand, not by the container, whose
     * parsing would turn a request with a bad escape in its query into a 400 that a test does not expect.
     */
    private static String param(HttpServletRequest request, String name) {
        String query = request.getQueryString();
        if (query == null) {
            return null;
        }
        for (String pair : query.split("&")) {
            int equals = pair.indexOf('=');
            if ((equals < 0 ? pair : pair.substring(0, equals)).equals(name)) {
                return equals < 0 ? "" : pair.substring(equals + 1);
            }
        }
        return null;
    }

    private void holdIfAsked(HttpServletRequest request) {
        String hold = param(request, "hold");
        if (hold != null) {
            holding(hold).release();
            try {
                gate(hold).await(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private CountDownLatch gate(String name) {
        return gates.computeIfAbsent(name, n -> new CountDownLatch(1));
    }

    private Semaphore holding(String name) {
        return arrivals.computeIfAbsent(name, n -> new Semaphore(0));
    }

    /** Waits until {@code count} requests held under {@code name} ({@code hold=NAME}) have arrived. */
    void awaitHeld(String name, int count) throws InterruptedException {
        if (!holding(name).tryAcquire(count, 10, TimeUnit.SECONDS)) {
            throw new IllegalStateException(count + " requests held as '" + name + "' did not arrive");
        }
    }

    /** Lets every request held under {@code name} be answered, now and from now on. */
    void release(String name) {
        gate(name).countDown();
    }

    /** Returns how many requests the application itself served (not counting the refused). */
    int served() {
        return served.get();
    }

    HttpResponse<String> get(String path, String... headers) {
        return send("GET", path, headers);
    }

    /** Sends a request with a method and no body. */
    HttpResponse<String> send(String method, String path, String... headers) {
        try {
            return client.send(request(method, path, headers), HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new IllegalStateException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** Sends a GET without waiting for the answer. */
    CompletableFuture<HttpResponse<String>> getAsync(String path, String... headers) {
        return client.sendAsync(request("GET", path, headers), HttpResponse.BodyHandlers.ofString());
    }

    private HttpRequest request(String method, String path, String... headers) {
        HttpRequest.Builder request = HttpRequest.newBuilder(uri(path))
                .timeout(Duration.ofSeconds(10))
                .method(method, HttpRequest.BodyPublishers.noBody());
        if (headers.length > 0) {
            request.headers(headers);
        }
        return request.build();
    }

    URI uri(String path) {
        return URI.create("http://127.0.0.1:" + connector.getLocalPort() + path);
    }

    /**
     * Sends {@code head} (request line and header lines, without the blank line) as raw bytes and returns
     * the status code of the answer.
     */
    int sendRaw(String head) throws IOException {
        try (Socket socket = new Socket("127.0.0.1", connector.getLocalPort())) {
            socket.setSoTimeout(10_000);
            OutputStream out = socket.getOutputStream();
            out.write((head + "\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.ISO_8859_1));
            out.flush();
            InputStream in = socket.getInputStream();
            String answer = new String(in.readAllBytes(), StandardCharsets.ISO_8859_1);
            if (!answer.startsWith("HTTP/1.1 ")) {
                throw new IllegalStateException("not an HTTP answer: " + answer);
            }
            return Integer.parseInt(answer.substring(9, 12));
        }
    }

    @Override
    public void close() {
        try {
            server.stop();
        } catch (Exception e) {
            throw new IllegalStateException("could not stop Jetty", e);
        }
    }
}
