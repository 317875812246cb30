/**
 * Tollgate as a servlet filter ({@code io.tollgate.servlet}). The request view it adapts is exported only to the
 * Spring Boot starter, which registers the filter.
 */
module io.tollgate.servlet {
    requires transitive io.tollgate.http;
    requires transitive jakarta.servlet;

    exports io.tollgate.servlet;
    exports io.tollgate.servlet.internal to
            io.tollgate.spring;
}
