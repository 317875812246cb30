package io.tollgate.spring;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** What the property records hold of the lists and maps Spring binds: never null, immutable, in the order given. */
final class BoundValues {

    private BoundValues() {}

    /** Returns {@code list} unmodifiable, or an empty one where it is absent. */
    static <T> List<T> listed(List<T> list) {
        return list == null ? List.of() : List.copyOf(list);
    }

    /** Returns {@code map} unmodifiable in its order, or an empty one where it is absent. */
    static <K, V> Map<K, V> ordered(Map<K, V> map) {
        return map == null ? Map.of() : Collections.unmodifiableMap(new LinkedHashMap<>(map));
    }
}
