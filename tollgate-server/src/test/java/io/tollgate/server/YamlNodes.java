package io.tollgate.server;

import java.util.List;
import java.util.Map;

/** The nodes SnakeYAML reads (maps, lists), typed for tests that walk an example file. */
final class YamlNodes {

    private YamlNodes() {}

    @SuppressWarnings("unchecked")
    static Map<String, Object> map(Object node) {
        return (Map<String, Object>) node;
    }

    @SuppressWarnings("unchecked")
    static List<Object> list(Object node) {
        return (List<Object>) node;
    }
}
