/**
 * Tollgate for HTTP: rules, client keys and the answers of a limited API ({@code io.tollgate.http}), shared by
 * the servlet filter, the Spring Boot starter and the server. The configuration reader is exported only to
 * those of Tollgate's modules that read settings.
 */
module io.tollgate.http {
    requires transitive io.tollgate;
    requires static org.yaml.snakeyaml;
    requires static micrometer.core;

    exports io.tollgate.http;
}
