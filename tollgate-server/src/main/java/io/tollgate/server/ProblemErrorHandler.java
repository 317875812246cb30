package io.tollgate.server;

import io.tollgate.http.RequestDecision;
import java.nio.ByteBuffer;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.handler.ErrorHandler;
import org.eclipse.jetty.util.Callback;

/**
 * Answers the errors that Jetty itself raises (a malformed request line, oversized headers, an ambiguous
 * path, a request that failed) as RFC 9457 problems, like every other error of the server, and never with
 * a stack trace.
 */
final class ProblemErrorHandler extends ErrorHandler {

    @Override
    protected void generateResponse(
            Request request, Response response, int code, String message, Throwable cause, Callback callback) {
        int status = code >= 400 && code <= 599 ? code : 500;
        Responses.write(response, callback, RequestDecision.problem(status, detail(status, message)));
    }

    @Override
    public ByteBuffer badMessageError(int status, String reason, HttpFields.Mutable fields) {
        RequestDecision problem =
                RequestDecision.problem(status >= 400 && status <= 599 ? status : 400, detail(status, reason));
        problem.headers().forEach((name, value) -> fields.put(new HttpField(name, value)));
        fields.put(HttpHeader.CACHE_CONTROL, "no-store");
        return ByteBuffer.wrap(problem.body());
    }

    /** The reason phrase, and for a client error what Jetty found wrong; a server error says no more. */
    private static String detail(int status, String message) {
        String reason = HttpStatus.getMessage(status);
        boolean says = status < 500 && message != null && !message.isBlank() && !message.equals(reason);
        return says ? reason + ": " + message : reason + ".";
    }
}
