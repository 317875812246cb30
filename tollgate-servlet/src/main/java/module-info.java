/**
 * Tollgate as a servlet filter ({@code io.tollgate.servlet}), and a servlet request as the rules see it.
 */
module io.tollgate.servlet {
    requires transitive io.tollgate.http;
    requires transitive jakarta.servlet;

    exports io.tollgate.servlet;
}
