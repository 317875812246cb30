package io.tollgate.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class RedisClusterTest {

    @RegisterExtension
    static final RedisClusterExtension redis = new RedisClusterExtension();

    @Test
    void everyMasterSeesAFormedClusterServingEverySlot() {
        for (RedisServer master : redis.cluster().masters()) {
            Map<String, String> info = RedisServer.fields((String) master.command("CLUSTER", "INFO"));

            assertThat(info).containsEntry("cluster_state", "ok").containsEntry("cluster_slots_ok", "16384");
            assertThat(info).containsEntry("cluster_known_nodes", "3");
        }
    }

    @Test
    void computesSlotsAsRedisDoes() {
        RedisServer any = redis.cluster().masters().get(0);
        for (String key : new String[] {"", "a", "tollgate:api:alice", "{user1}:x", "x{}y", "{}{a}", "ключ", "a{b"}) {
            assertThat((long) RedisCluster.slot(key))
                    .as("slot of '%s'", key)
                    .isEqualTo(any.command("CLUSTER", "KEYSLOT", key));
        }
    }

    @Test
    void aKeyLivesOnTheMasterOfItsSlotAndIsRefusedElsewhere() {
        String key = "tollgate:api:alice";
        RedisServer owner = redis.cluster().masterForSlot(RedisCluster.slot(key));
        RedisServer other = redis.cluster().masters().stream()
                .filter(master -> master != owner)
                .findFirst()
                .orElseThrow();

        owner.command("SET", key, "v");

        assertThat(owner.command("GET", key)).isEqualTo("v");
        assertThatThrownBy(() -> other.command("GET", key))
                .isInstanceOf(RedisErrorReply.class)
                .hasMessageStartingWith("MOVED");
    }

    @Test
    void rejectsAClusterWithoutMasters() {
        assertThatThrownBy(() -> RedisCluster.start(0)).isInstanceOf(IllegalArgumentException.class);
    }
}
