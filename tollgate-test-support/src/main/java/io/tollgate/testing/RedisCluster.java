package io.tollgate.testing;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A Redis Cluster of real {@code redis-server} processes on free loopback ports: masters joined with
 * {@code CLUSTER MEET}, the 16384 slots split evenly with {@code CLUSTER ADDSLOTS} (which Redis 6.2 and 7
 * both have), and waited for until every node reports {@code cluster_state:ok}.
 *
 * <p>Not thread-safe: drive it from one test thread.
 */
public final class RedisCluster implements AutoCloseable {

    /** The number of hash slots in Redis Cluster. */
    public static final int SLOTS = 16_384;

    private static final Duration FORM_TIMEOUT = Duration.ofSeconds(30);

    private final List<RedisServer> masters = new ArrayList<>();

    private RedisCluster(int masterCount, List<String> nodeArguments) {
        try {
            for (int i = 0; i < masterCount; i++) {
                masters.add(RedisServer.startClusterNode(nodeArguments));
            }
            RedisServer first = masters.get(0);
            for (RedisServer other : masters.subList(1, masters.size())) {
                first.command("CLUSTER", "MEET", RedisServer.HOST, Integer.toString(other.port()));
            }
            for (int i = 0; i < masterCount; i++) {
                List<String> addSlots = new ArrayList<>(List.of("CLUSTER", "ADDSLOTS"));
                for (int slot = firstSlot(i, masterCount); slot < firstSlot(i + 1, masterCount); slot++) {
                    addSlots.add(Integer.toString(slot));
                }
                masters.get(i).command(addSlots.toArray(String[]::new));
            }
            awaitFormed();
        } catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    /**
     * Starts a cluster of {@code masterCount} masters (at least 1) and waits until it serves every slot;
     * {@code nodeArguments} go to every node, such as {@code "--cluster-require-full-coverage", "no"}.
     */
    public static RedisCluster start(int masterCount, String... nodeArguments) {
        if (masterCount < 1) {
            throw new IllegalArgumentException("a cluster needs at least one master, was " + masterCount);
        }
        return new RedisCluster(masterCount, List.of(nodeArguments));
    }

    /** Returns the masters, in slot order: the first serves the lowest slots. */
    public List<RedisServer> masters() {
        return List.copyOf(masters);
    }

    /** Returns the URI of every master, as a cluster client's seeds. */
    public List<String> uris() {
        return masters.stream().map(RedisServer::uri).toList();
    }

    /** Returns the master that serves {@code slot}. */
    public RedisServer masterForSlot(int slot) {
        for (int i = 0; i < masters.size(); i++) {
            if (slot < firstSlot(i + 1, masters.size())) {
                return masters.get(i);
            }
        }
        throw new IllegalArgumentException("slot must be below " + SLOTS + ", was " + slot);
    }

    /** Returns the hash slot of a key, honouring {@code {hash tags}} as Redis does. */
    public static int slot(byte[] key) {
        int start = -1;
        for (int i = 0; i < key.length; i++) {
            if (key[i] == '{') {
                start = i;
                break;
            }
        }
        if (start >= 0) {
            for (int end = start + 1; end < key.length; end++) {
                if (key[end] == '}') {
                    if (end > start + 1) {
                        return crc16(key, start + 1, end) % SLOTS;
                    }
                    break;
                }
            }
        }
        return crc16(key, 0, key.length) % SLOTS;
    }

    /** Returns the hash slot of a UTF-8 key. */
    public static int slot(String key) {
        return slot(key.getBytes(StandardCharsets.UTF_8));
    }

    @Override
    public void close() {
        masters.forEach(RedisServer::close);
    }

    private void awaitFormed() {
        Instant deadline = Instant.now().plus(FORM_TIMEOUT);
        while (Instant.now().isBefore(deadline)) {
            if (masters.stream().allMatch(this::seesFormedCluster)) {
                return;
            }
            RedisServer.sleep(50);
        }
        throw new IllegalStateException(
                "cluster of " + masters.size() + " masters did not form within " + FORM_TIMEOUT);
    }

    private boolean seesFormedCluster(RedisServer node) {
        Map<String, String> info = RedisServer.fields((String) node.command("CLUSTER", "INFO"));
        return "ok".equals(info.get("cluster_state"))
                && Integer.toString(masters.size()).equals(info.get("cluster_known_nodes"))
                && Integer.toString(SLOTS).equals(info.get("cluster_slots_ok"));
    }

    private static int firstSlot(int master, int masterCount) {
        return (int) ((long) SLOTS * master / masterCount);
    }

    /** CRC16-CCITT (XMODEM), the checksum Redis Cluster uses for key slots. */
    private static int crc16(byte[] bytes, int from, int to) {
        int crc = 0;
        for (int i = from; i < to; i++) {
            crc ^= (bytes[i] & 0xff) << 8;
            for (int bit = 0; bit < 8; bit++) {
                crc = (crc & 0x8000) != 0 ? (crc << 1) ^ 0x1021 : crc << 1;
            }
            crc &= 0xffff;
        }
        return crc;
    }
}
