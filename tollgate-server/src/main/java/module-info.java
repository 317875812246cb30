/**
 * Tollgate's server: the proxy, the decision API, Envoy's rate limit service, forward-auth and the management port,
 * on Netty, over the store its file chooses. {@code io.tollgate.server} is its API ({@code TollgateServer}, {@code
 * ServerConfig}, {@code Main}); its internal packages are its own. The runnable jar ({@code tollgate-server.jar})
 * holds every dependency and runs on the class path; this descriptor is for the plain jar on the module path.
 */
module io.tollgate.server {
    requires transitive io.tollgate.http;
    requires java.management;
    requires jdk.unsupported; // sun.misc.Signal: the server stops in order on SIGTERM
    requires com.fasterxml.jackson.core;
    requires com.google.common;
    requires com.google.protobuf;
    requires io.grpc;
    requires io.grpc.netty.shaded;
    requires io.grpc.protobuf;
    requires io.grpc.services;
    requires io.grpc.stub;
    requires io.netty.buffer;
    requires io.netty.codec;
    requires io.netty.codec.http;
    requires io.netty.common;
    requires io.netty.handler;
    requires io.netty.transport;
    requires micrometer.core;
    requires micrometer.registry.prometheus;
    // read by the rules file's YAML (tollgate-http names it optional) and the store on Redis, which the file may choose
    requires org.yaml.snakeyaml;
    requires io.tollgate.redis;

    exports io.tollgate.server;

    // protobuf's generated code reads its messages' accessors by reflection
    opens io.tollgate.server.internal.envoy.proto to
            com.google.protobuf;
}
