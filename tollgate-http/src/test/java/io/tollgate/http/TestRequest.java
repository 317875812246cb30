package io.tollgate.http;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** A request built in a test, as a server would present it. */
final class TestRequest implements HttpRequestView {

    private String method = "GET";
    private String path = "/";
    private String host = "api.example.com";
    private final Map<String, List<String>> headers = new LinkedHashMap<>();
    private final Map<String, String> query = new LinkedHashMap<>();
    private String remoteAddress = "203.0.113.7";
    private String principal;

    static TestRequest get(String path) {
        TestRequest request = new TestRequest();
        request.path = path;
        return request;
    }

    TestRequest method(String method) {
        this.method = method;
        return this;
    }

    TestRequest host(String host) {
        this.host = host;
        return this;
    }

    TestRequest header(String name, String value) {
        headers.computeIfAbsent(name.toLowerCase(Locale.ROOT), n -> new ArrayList<>())
                .add(value);
        return this;
    }

    TestRequest query(String name, String value) {
        query.put(name, value);
        return this;
    }

    TestRequest from(String remoteAddress) {
        this.remoteAddress = remoteAddress;
        return this;
    }

    TestRequest principal(String principal) {
        this.principal = principal;
        return this;
    }

    @Override
    public String method() {
        return method;
    }

    @Override
    public String path() {
        return path;
    }

    @Override
    public String host() {
        return host;
    }

    @Override
    public List<String> headers(String name) {
        return headers.getOrDefault(name.toLowerCase(Locale.ROOT), List.of());
    }

    @Override
    public String queryParameter(String name) {
        return query.get(name);
    }

    @Override
    public String remoteAddress() {
        return remoteAddress;
    }

    @Override
    public String principal() {
        return principal;
    }
}
