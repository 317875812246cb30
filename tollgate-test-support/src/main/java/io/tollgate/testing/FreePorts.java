package io.tollgate.testing;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Picks loopback ports that are free now and not yet handed out by this JVM. Ports come from 20000-49999,
 * below the usual ephemeral range, so that port + 10000 (Redis Cluster's bus port) is free as well.
 *
 * <p>Thread-safe.
 */
public final class FreePorts {

    private static final Set<Integer> HANDED_OUT = new HashSet<>();

    private FreePorts() {}

    /**
     * Returns a loopback port that nothing listens on, for tests of an unreachable server: free now, and
     * never handed to a server that this JVM's extensions start.
     *
     * @throws IllegalStateException if no free port is found
     */
    public static int nobodyListens() {
        return pick();
    }

    static synchronized int pick() {
        for (int attempt = 0; attempt < 1_000; attempt++) {
            int port = ThreadLocalRandom.current().nextInt(20_000, 50_000);
            if (!HANDED_OUT.contains(port) && isFree(port) && isFree(port + 10_000)) {
                HANDED_OUT.add(port);
                return port;
            }
        }
        throw new IllegalStateException("no free loopback port pair found in 20000-49999");
    }

    private static boolean isFree(int port) {
        try (ServerSocket socket = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
            return true;
        } catch (IOException taken) {
            return false;
        }
    }
}
