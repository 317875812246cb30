package io.tollgate.testing;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Picks loopback ports that are free now and reserved for this JVM until it exits. Ports come from below the
 * range the kernel hands out to outgoing connections (Linux's {@code ip_local_port_range}, 32768 and up by
 * default), with port + 10000 (Redis Cluster's bus port) below it as well: a port free now could otherwise be
 * taken as the source port of some client's connection before the server binds it (seen in CI: "Address
 * already in use").
 *
 * <p>A port handed out stays reserved while its server is down (a test that kills Redis and restarts it on the
 * same port) and so does its bus port: the reservation is a set for the test classes that one JVM runs side
 * by side, and a lock on a file per port under the temporary directory for the JVMs that a build runs at once
 * (modules built side by side each fork their own). The operating system drops a JVM's locks when it exits,
 * however it exits.
 *
 * <p>Thread-safe.
 */
public final class FreePorts {

    private static final Set<Integer> HANDED_OUT = new HashSet<>();
    /** Open while the JVM lives: closing a channel would release its lock. */
    private static final List<FileChannel> LOCKED = new ArrayList<>();

    private static final Path LOCKS = Path.of(System.getProperty("java.io.tmpdir"), "tollgate-test-ports");
    private static final boolean LOCKS_USABLE = usable(LOCKS);
    private static final int LOWEST = 10_000;
    private static final int BUS_OFFSET = 10_000;
    /** One past the highest port picked: the first port of the ephemeral range, less the bus offset. */
    private static final int BEYOND = bound(ephemeralLow() - BUS_OFFSET);

    private FreePorts() {}

    /**
     * Returns a loopback port that nothing listens on, for tests of an unreachable server: free now, and
     * never handed to a server that this JVM's extensions, or another JVM's, start.
     *
     * @throws IllegalStateException if no free port is found
     */
    public static int nobodyListens() {
        return pick();
    }

    static synchronized int pick() {
        for (int attempt = 0; attempt < 1_000; attempt++) {
            int port = ThreadLocalRandom.current().nextInt(LOWEST, BEYOND);
            int bus = port + BUS_OFFSET;
            if (!HANDED_OUT.contains(port)
                    && !HANDED_OUT.contains(bus)
                    && isFree(port)
                    && isFree(bus)
                    && reserve(port, bus)) {
                HANDED_OUT.add(port);
                HANDED_OUT.add(bus);
                return port;
            }
        }
        throw new IllegalStateException("no free loopback port pair found in " + LOWEST + "-" + (BEYOND - 1));
    }

    /**
     * Locks both ports' files for this JVM, or neither: false if another JVM holds either. Where the directory of
     * locks cannot be written (another user's), ports are reserved in this JVM only, as they were before locks.
     */
    private static boolean reserve(int port, int bus) {
        if (!LOCKS_USABLE) {
            return true;
        }
        FileChannel first = lock(port);
        if (first == null) {
            return false;
        }
        FileChannel second = lock(bus);
        if (second == null) {
            closeQuietly(first);
            return false;
        }
        LOCKED.add(first);
        LOCKED.add(second);
        return true;
    }

    /** The port's file, locked by this JVM; null if another JVM holds it, or it cannot be opened. */
    private static FileChannel lock(int port) {
        FileChannel channel = null;
        try {
            channel = FileChannel.open(
                    LOCKS.resolve(Integer.toString(port)), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
            FileLock lock = channel.tryLock();
            if (lock == null) {
                closeQuietly(channel);
                return null;
            }
            return channel;
        } catch (OverlappingFileLockException heldHere) {
            closeQuietly(channel); // this JVM holds it already
            return null;
        } catch (IOException unusable) {
            closeQuietly(channel); // such as a file another user left: that port is not ours to take
            return null;
        }
    }

    /** Whether the directory of locks exists, or could be made, and this JVM can write in it. */
    private static boolean usable(Path locks) {
        try {
            Files.createDirectories(locks);
        } catch (IOException | RuntimeException e) {
            System.err.println("FreePorts: no directory of port locks at " + locks + " (" + e
                    + "): ports are reserved in this JVM only");
            return false;
        }
        if (!Files.isWritable(locks)) {
            System.err.println("FreePorts: " + locks + " is not writable: ports are reserved in this JVM only");
            return false;
        }
        return true;
    }

    private static void closeQuietly(FileChannel channel) {
        if (channel == null) {
            return;
        }
        try {
            channel.close();
        } catch (IOException ignored) {
            // the lock, if any, goes with the channel; nothing else to undo
        }
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
