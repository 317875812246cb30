package io.tollgate.spring;

import io.tollgate.http.RequestDecision;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.server.reactive.ServerHttpResponse;
import reactor.core.publisher.Mono;

/** Writes decisions to WebFlux responses, as the servlet filter writes them to servlet responses. */
final class ReactiveResponses {

    private ReactiveResponses() {}

    /** Adds the decision's header fields; several limiters' rate-limit fields add up, the rest are set. */
    static void addHeaders(HttpHeaders headers, RequestDecision decision) {
        decision.headers().forEach((name, value) -> {
            if (RateLimitInterceptor.LIST_FIELDS.contains(name)) {
                headers.add(name, value);
            } else {
                headers.set(name, value);
            }
        });
    }

    /** Answers with the decision: its status, header fields and body (a refusal's problem). */
    static Mono<Void> write(ServerHttpResponse response, RequestDecision decision) {
        response.setStatusCode(HttpStatusCode.valueOf(decision.status()));
        addHeaders(response.getHeaders(), decision);
        byte[] body = decision.body();
        response.getHeaders().setContentLength(body.length);
        return response.writeWith(Mono.just(response.bufferFactory().wrap(body)));
    }
}
