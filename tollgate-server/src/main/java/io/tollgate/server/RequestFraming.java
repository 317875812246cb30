package io.tollgate.server;

import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpRequest;
import java.util.List;

/**
 * Where a request's head leaves its end to be read in more than one way, so that this server and the upstream
 * behind it could disagree on where the next request begins (request smuggling): such a request is refused with 400
 * before anything of it is forwarded, and its connection closed (RFC 9112, 6.1 and 6.3). Netty's decoder refuses
 * two {@code Content-Length} values and one beside {@code Transfer-Encoding} itself; this refuses a {@code
 * Transfer-Encoding} in two fields or with any coding but {@code chunked}, which the decoder would read as no body,
 * two {@code Host} fields, and more than {@value #MAX_HEADER_FIELDS} header fields (431). Stateless.
 */
final class RequestFraming {

    /** The most header fields a request may have (as Tomcat's default). */
    static final int MAX_HEADER_FIELDS = 100;

    /** How the problem of a request with too many header fields begins: it is answered 431, not 400. */
    static final String TOO_MANY_FIELDS = "Request Header Fields Too Large";

    private RequestFraming() {}

    /** Returns what makes {@code request}'s framing ambiguous, or null if nothing does. */
    static String problem(HttpRequest request) {
        HttpHeaders headers = request.headers();
        if (headers.size() > MAX_HEADER_FIELDS) {
            return TOO_MANY_FIELDS + ": more than " + MAX_HEADER_FIELDS + " header fields.";
        }
        if (headers.getAll(HttpHeaderNames.HOST).size() > 1) {
            return "Host is given in two fields; a request names one host.";
        }
        List<String> codings = headers.getAll(HttpHeaderNames.TRANSFER_ENCODING);
        if (codings.isEmpty()) {
            return null;
        }
        if (codings.size() > 1) {
            return "Transfer-Encoding is given in " + codings.size()
                    + " fields; a request's framing is read one way only.";
        }
        String coding = codings.get(0).strip();
        if (!coding.equalsIgnoreCase("chunked")) {
            return "Transfer-Encoding '" + shown(coding) + "' is not read here: only chunked is.";
        }
        return null;
    }

    private static String shown(String value) {
        return value.length() <= 100 ? value : value.substring(0, 100) + "...";
    }
}
