package io.tollgate.http;

import io.tollgate.config.ConfigException;
import io.tollgate.config.ConfigNode;
import java.util.Objects;

/**
 * Reads a YAML configuration document into a {@link ConfigNode} whose errors name their lines. SnakeYAML, an
 * optional dependency, is loaded only when a document is read. Stateless.
 */
public final class YamlConfig {

    private YamlConfig() {}

    /**
     * Parses a YAML document; an empty document is an empty map.
     *
     * @throws ConfigException if the text is not YAML, has a duplicate key, or is not a map at the top, with the
     *     line
     * @throws IllegalArgumentException if SnakeYAML ({@code org.yaml:snakeyaml}) is not on the class path
     */
    public static ConfigNode parse(String text) {
        Objects.requireNonNull(text, "text");
        try {
            return YamlTree.parse(text);
        } catch (NoClassDefFoundError e) {
            throw new IllegalArgumentException(
                    "reading YAML needs SnakeYAML (org.yaml:snakeyaml) on the class path; or use a .properties file",
                    e);
        }
    }
}
