package io.tollgate.testing;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Picks loopback ports that are free now and not yet handed out by this JVM. Ports come from below the range
 * the kernel hands out to outgoing connections (Linux's {@code ip_local_port_range}, 32768 and up by default),
 * with port + 10000 (Redis Cluster's bus port) below it as well: a port free now could otherwise be taken as the
 * source port of some client's connection before the server binds it (seen in CI: "Address already in use").
 *
 * <p>Thread-safe.
 */
public final class FreePorts {

    private static final Set<Integer> HANDED_OUT = new HashSet<>();
    private static final int LOWEST = 10_000;
    private static final int BUS_OFFSET = 10_000;
    /** One past the highest port picked: the first port of the ephemeral range, less the bus offset. */
    private static final int BEYOND = bound(ephemeralLow() - BUS_OFFSET);

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
            int port = ThreadLocalRandom.current().nextInt(LOWEST, BEYOND);
            if (!HANDED_OUT.contains(port) && isFree(port) && isFree(port + BUS_OFFSET)) {
                HANDED_OUT.add(port);
                return port;
            }
        }
        throw new IllegalStateException("no free loopback port pair found in " + LOWEST + "-" + (BEYOND - 1));
    }

    /** The first port of the kernel's ephemeral range; 32768 (Linux's default) where it cannot be read. */
    private static int ephemeralLow() {
        try {
            // readAllLines, not readString: the JDK sizes readString by the file's size, which /proc reports as 0
            String range = Files.readAllLines(Path.of("/proc/sys/net/ipv4/ip_local_port_range"))
                    .get(0);
            return Integer.parseInt(range.trim().split("\\s+")[0]);
        } catch (IOException | RuntimeException unreadable) {
            return 32_768;
        }
    }

    /** The upper bound, or the former 20000-49999 range's if the ephemeral range leaves too few ports below it. */
    private static int bound(int beyond) {
        return beyond - LOWEST >= 2_000 ? Math.min(beyond, 50_000) : 50_000;
    }

    private static boolean isFree(int port) {
        try (ServerSocket socket = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
            return true;
        } catch (IOException taken) {
            return false;
        }
    }
}
