package io.tollgate.runtime;

import io.tollgate.RateLimiter;
import io.tollgate.config.ConfigException;
import io.tollgate.config.ConfigNode;
import io.tollgate.config.ConfigSection;
import io.tollgate.internal.store.MemoryStoreProvider;
import io.tollgate.spi.OpenedStore;
import io.tollgate.spi.StoreProvider;
import io.tollgate.spi.StoreSettings;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.ServiceConfigurationError;
import java.util.ServiceLoader;

/**
 * The stores on the class path (or module path), found once by {@link ServiceLoader} ({@link StoreProvider}), and the
 * choice a configuration makes: the store whose section it holds, or memory ({@link #DEFAULT}) when it holds none.
 * For programs that read a whole file of Tollgate's settings, as the server does: the stores' sections join the
 * file's keys ({@link #withSections}), and the store is read before anything opens ({@link #read(ConfigNode)}).
 *
 * <p>Thread-safe; no instances.
 */
public final class Stores {

    /** The store of a configuration that names none: buckets in this process's memory. */
    public static final String DEFAULT = MemoryStoreProvider.SCHEMA.name();

    private static final System.Logger LOG = System.getLogger("io.tollgate");

    /** Every provider found, by section, the default first. */
    private static final Map<String, StoreProvider> PROVIDERS = load();

    private Stores() {}

    private static Map<String, StoreProvider> load() {
        List<StoreProvider> found = new ArrayList<>();
        Iterator<StoreProvider> providers = ServiceLoader.load(
                        StoreProvider.class, StoreProvider.class.getClassLoader())
                .iterator();
        while (true) {
            try {
                if (!providers.hasNext()) {
                    break;
                }
                found.add(providers.next());
            } catch (ServiceConfigurationError e) {
                // A broken jar must not stop a file that names another store; one that names it hears of it
                LOG.log(
                        Level.WARNING,
                        "tollgate: a store provider could not be loaded, and is left out: {0}",
                        e.getMessage());
            }
        }
        if (found.stream().noneMatch(provider -> provider.section().equals(DEFAULT))) {
            found.add(new MemoryStoreProvider()); // a class path that lost core's service file still has memory
        }
        found.sort(Comparator.comparing(provider -> !provider.section().equals(DEFAULT)));
        Map<String, StoreProvider> bySection = new LinkedHashMap<>();
        for (StoreProvider provider : found) {
            bySection.putIfAbsent(provider.section(), provider); // a provider on the class path twice counts once
        }
        return Map.copyOf(bySection);
    }

    /** Returns the sections of the stores found, the default first. */
    public static List<String> sections() {
        List<String> sections = new ArrayList<>(PROVIDERS.keySet());
        sections.sort(Comparator.comparing((String section) -> !section.equals(DEFAULT))
                .thenComparing(s -> s));
        return sections;
    }

    /**
     * Returns the keys of the section of the store named {@code section}.
     *
     * @throws IllegalArgumentException if no such store was found
     */
    public static ConfigSection schema(String section) {
        StoreProvider provider = PROVIDERS.get(Objects.requireNonNull(section, "section"));
        if (provider == null) {
            throw new IllegalArgumentException(
                    "no store '" + section + "' was found; stores found: " + String.join(", ", sections()));
        }
        return provider.schema();
    }

    /** Returns {@code top} with the section of every store found added. */
    public static ConfigSection withSections(ConfigSection top) {
        ConfigSection with = top;
        for (String section : sections()) {
            with = with.with(section, PROVIDERS.get(section).schema());
        }
        return with;
    }

    /**
     * Reads the store that {@code root} chooses by holding its section; memory, with its defaults, when it holds
     * none.
     *
     * @throws ConfigException if it holds the sections of two stores, or a setting is invalid, naming it
     */
    public static StoreSettings read(ConfigNode root) {
        List<String> present = sections().stream()
                .filter(section -> root.child(section).isPresent())
                .toList();
        if (present.size() > 1) {
            throw root.child(present.get(0)).error("applies only without " + present.get(1) + "; choose one");
        }
        return read(present.isEmpty() ? DEFAULT : present.get(0), root);
    }

    /**
     * Reads the store named {@code section} from {@code root}'s section of that name (absent: its defaults).
     *
     * @throws ConfigException if no such store was found, or a setting is invalid, naming it
     */
    public static StoreSettings read(String section, ConfigNode root) {
        StoreProvider provider = PROVIDERS.get(Objects.requireNonNull(section, "section"));
        if (provider == null) {
            throw root.error("has no store '" + section + "'; stores found: " + String.join(", ", sections()));
        }
        return provider.read(root.child(section));
    }

    /**
     * Returns a view of {@code limiter} as a store, where a provider recognises it as one of its own (such as a
     * limiter an application built itself): its ping and its exchange of summaries, but closing the view leaves
     * the limiter open. Empty for a limiter no provider knows.
     */
    public static Optional<OpenedStore> adopt(RateLimiter limiter) {
        Objects.requireNonNull(limiter, "limiter");
        for (StoreProvider provider : PROVIDERS.values()) {
            Optional<OpenedStore> adopted = provider.adopt(limiter);
            if (adopted.isPresent()) {
                return adopted;
            }
        }
        return Optional.empty();
    }
}
