package io.tollgate.server;

import io.tollgate.runtime.Stores;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * The settings that take effect only when the server starts (where it listens, the store, the upstream, the
 * management port, Envoy's listener, top keys): a reload keeps the running ones, and says which of the file's
 * changes wait for the next start.
 */
final class StartOnlySettings {

    private StartOnlySettings() {}

    /**
     * Returns the settings of {@code next} that differ from {@code running}'s and take effect only at a start,
     * named as the file names them.
     */
    static List<String> changed(ServerConfig running, ServerConfig next) {
        List<String> changed = new ArrayList<>();
        if (!running.host().equals(next.host()) || running.port() != next.port()) {
            changed.add("server.host and server.port");
        }
        if (!Objects.equals(running.listeners().tls(), next.listeners().tls())) {
            changed.add("server.tls");
        }
        if (!Objects.equals(running.listeners().decision(), next.listeners().decision())) {
            changed.add("server.decision-port and server.decision-host");
        }
        if (!running.listeners().exposure().equals(next.listeners().exposure())) {
            changed.add("server.expose-*-publicly");
        }
        if (!running.listeners().allowedHosts().equals(next.listeners().allowedHosts())) {
            changed.add("server.allowed-hosts");
        }
        if (!running.listeners().headTimeout().equals(next.listeners().headTimeout())
                || running.listeners().maxConnections() != next.listeners().maxConnections()) {
            changed.add("server.request-head-timeout and server.max-connections");
        }
        if (!running.shutdownTimeout().equals(next.shutdownTimeout())) {
            changed.add("server.shutdown-timeout");
        }
        if (!running.idleTimeout().equals(next.idleTimeout())) {
            changed.add("server.idle-timeout");
        }
        if (!Objects.equals(running.upstream(), next.upstream())
                || !running.upstreamTimeout().equals(next.upstreamTimeout())
                || running.maxBodyBytes() != next.maxBodyBytes()) {
            changed.add("server.upstream, server.upstream-timeout and server.max-body-size");
        }
        if (!Objects.equals(running.management(), next.management())) {
            changed.add("server.management-*");
        }
        if ((running.envoy() == null) != (next.envoy() == null)
                || (running.envoy() != null && !running.envoy().listensAs(next.envoy()))) {
            changed.add("envoy.port, envoy.host and envoy.tls");
        }
        if (!running.topKeys().equals(next.topKeys())) {
            changed.add("top-keys");
        }
        if (!running.store().equals(next.store())) {
            // the store that is not the default is the one the file added, removed or changed
            changed.add(
                    running.store().name().equals(Stores.DEFAULT)
                            ? next.store().name()
                            : running.store().name());
        }
        return changed;
    }
}
