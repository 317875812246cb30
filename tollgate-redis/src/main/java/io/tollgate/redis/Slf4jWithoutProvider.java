package io.tollgate.redis;

import java.util.ServiceLoader;

/**
 * Keeps SLF4J quiet in a program that has no SLF4J provider. Lettuce logs through SLF4J, whose API comes
 * with tollgate-redis; without a provider SLF4J falls back to logging nothing, and says so in three warnings
 * on standard error, which tell a plain program's user nothing they need. So when no provider is on the
 * class path and {@code slf4j.internal.verbosity} is not set, it is set to {@code ERROR} before Lettuce first
 * uses SLF4J. With a provider (Logback, Log4j 2, slf4j-simple, slf4j-jdk14), nothing changes.
 */
final class Slf4jWithoutProvider {

    private static final String VERBOSITY = "slf4j.internal.verbosity";

    private Slf4jWithoutProvider() {}

    /** Quiets SLF4J's own warnings if there is no provider and nobody chose their verbosity. */
    static void quiet() {
        if (System.getProperty(VERBOSITY) != null) {
            return;
        }
        try {
            Class<?> provider = Class.forName("org.slf4j.spi.SLF4JServiceProvider");
            ClassLoader loader = Slf4jWithoutProvider.class.getClassLoader();
            if (ServiceLoader.load(provider, loader).stream().findAny().isEmpty()) {
                System.setProperty(VERBOSITY, "ERROR");
            }
        } catch (ClassNotFoundException | LinkageError | java.util.ServiceConfigurationError e) {
            // no SLF4J 2 here, or a broken provider: SLF4J says what it says
        }
    }
}
