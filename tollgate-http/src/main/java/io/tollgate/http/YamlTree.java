package io.tollgate.http;

import io.tollgate.config.ConfigException;
import io.tollgate.config.ConfigNode;
import java.io.StringReader;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.error.Mark;
import org.yaml.snakeyaml.error.MarkedYAMLException;
import org.yaml.snakeyaml.error.YAMLException;
import org.yaml.snakeyaml.nodes.MappingNode;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.NodeTuple;
import org.yaml.snakeyaml.nodes.ScalarNode;
import org.yaml.snakeyaml.nodes.SequenceNode;
import org.yaml.snakeyaml.nodes.Tag;

/**
 * Parses YAML into plain maps, lists and string scalars with SnakeYAML, and remembers the line of every
 * value, so that a configuration error can say where it is. A class of its own so that SnakeYAML, an
 * optional dependency, is loaded only when a YAML file is read.
 *
 * <p>Scalars stay strings (or null): the configuration reader decides what a value means, so {@code on}
 * or {@code no} is never silently read as a boolean, nor {@code 010} as octal.
 */
final class YamlTree {

    /**
     * How deep values may nest while they are read: beyond SnakeYAML's own limit on the text (50 levels), reached
     * only by an alias that nests a value in itself ({@code a: &a [*a]}), which ends in an error rather than in a
     * stack overflow.
     */
    static final int MAX_DEPTH = 64;

    private YamlTree() {}

    /**
     * @throws ConfigException if the text is not YAML, has a duplicate key or is not a map at the top, with its line
     */
    @SuppressWarnings("unchecked")
    static ConfigNode parse(String text) {
        LoaderOptions options = new LoaderOptions();
        options.setMaxAliasesForCollections(10);
        options.setCodePointLimit(1 << 20);
        Node root;
        try {
            root = new Yaml(options).compose(new StringReader(text));
        } catch (MarkedYAMLException e) {
            Mark mark = e.getProblemMark() != null ? e.getProblemMark() : e.getContextMark();
            throw new ConfigException(
                    mark == null ? 0 : mark.getLine() + 1, "not valid YAML: " + oneLine(e.getProblem()), e);
        } catch (YAMLException e) {
            throw new ConfigException(0, "not valid YAML: " + oneLine(e.getMessage()), e);
        }
        Map<String, Integer> lines = new HashMap<>();
        Object value = root == null ? null : convert(root, "", lines, 0);
        if (value != null && !(value instanceof Map)) {
            throw new ConfigException(1, "the top level must be a map of settings");
        }
        return ConfigNode.of(value == null ? Map.of() : (Map<String, Object>) value, lines);
    }

    private static Object convert(Node node, String path, Map<String, Integer> lines, int depth) {
        if (depth > MAX_DEPTH) {
            throw new ConfigException(
                    node.getStartMark().getLine() + 1,
                    (path.isEmpty() ? "configuration" : path.substring(0, Math.min(path.length(), 200)))
                            + ": values nest deeper than " + MAX_DEPTH + " levels (or an alias holds itself)");
        }
        lines.putIfAbsent(path, node.getStartMark().getLine() + 1);
        if (node instanceof MappingNode mapping) {
            Map<String, Object> map = new LinkedHashMap<>();
            for (NodeTuple tuple : mapping.getValue()) {
                if (!(tuple.getKeyNode() instanceof ScalarNode keyNode)) {
                    throw new ConfigException(
                            tuple.getKeyNode().getStartMark().getLine() + 1, "a setting name must be text");
                }
                String key = keyNode.getValue();
                String childPath = path.isEmpty() ? key : path + "." + key;
                if (map.containsKey(key)) {
                    throw new ConfigException(
                            keyNode.getStartMark().getLine() + 1,
                            (path.isEmpty() ? "configuration" : path) + ": duplicate key " + key);
                }
                map.put(key, convert(tuple.getValueNode(), childPath, lines, depth + 1));
            }
            return map;
        }
        if (node instanceof SequenceNode sequence) {
            List<Object> list = new ArrayList<>();
            for (Node element : sequence.getValue()) {
                list.add(convert(element, path + "[" + list.size() + "]", lines, depth + 1));
            }
            return list;
        }
        ScalarNode scalar = (ScalarNode) node;
        return Tag.NULL.equals(scalar.getTag()) ? null : scalar.getValue();
    }

    private static String oneLine(String text) {
        return text == null ? "" : text.replace('\n', ' ').strip();
    }
}
