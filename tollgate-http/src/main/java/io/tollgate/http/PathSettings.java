package io.tollgate.http;

import java.util.Objects;

/**
 * How {@link NormalPath} reads the path forms that servers disagree on: the {@code paths} section of a rules file,
 * the server's file and the starter's {@code tollgate.paths.*}. Each default is the choice that no upstream can read
 * differently from the rules: empty segments merged, backslashes and encoded slashes refused.
 *
 * @param mergeSlashes whether an empty segment ({@code //}) is dropped, as nginx and most frameworks do; false
 *     refuses a path that has one
 * @param backslash what a {@code \} (or {@code %5C}) in a path is
 * @param encodedSlash what a {@code %2F} in a path is
 * @param parameters what becomes of a segment's {@code ;parameters}
 */
public record PathSettings(
        boolean mergeSlashes, Backslash backslash, EncodedSlash encodedSlash, Parameters parameters) {

    /** Empty segments merged, backslashes and encoded slashes refused, parameters dropped. */
    public static final PathSettings DEFAULT =
            new PathSettings(true, Backslash.REFUSE, EncodedSlash.REFUSE, Parameters.DROP);

    /** What a backslash in a path is. */
    public enum Backslash {
        /** The request is refused with 400: some servers read it as {@code /} (IIS, several frameworks), most not. */
        REFUSE,
        /** A segment separator, as {@code /}: for services that read it so; it is forwarded as {@code /}. */
        SLASH
    }

    /** What an encoded slash ({@code %2F}) in a path is. */
    public enum EncodedSlash {
        /** The request is refused with 400: some servers decode it into a separator before routing, some not. */
        REFUSE,
        /**
         * Part of its segment, forwarded encoded: for services that never decode it (an identifier holding a
         * {@code /}); rules see it as {@code %2F} within the segment.
         */
        KEEP
    }

    /** What becomes of a segment's parameters, as {@code v=2} in {@code /api/users;v=2/42}. */
    public enum Parameters {
        /**
         * Dropped: rules match the path without them and the proxy forwards it without them, since Tomcat, Jetty
         * and Spring route {@code /api/users;v=2} as {@code /api/users} and other servers do not.
         */
        DROP,
        /**
         * Forwarded: for services that read them (JAX-RS {@code @MatrixParam}); rules still match the path without
         * them, as those services route it.
         */
        KEEP
    }

    /**
     * Checks the settings.
     *
     * @throws NullPointerException if backslash, encodedSlash or parameters is null
     */
    public PathSettings {
        Objects.requireNonNull(backslash, "backslash");
        Objects.requireNonNull(encodedSlash, "encodedSlash");
        Objects.requireNonNull(parameters, "parameters");
    }
}
