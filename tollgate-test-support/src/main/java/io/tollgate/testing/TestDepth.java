package io.tollgate.testing;

/**
 * How deep a test that repeats itself goes: the usual build runs each such test a few times, enough that it
 * fails without the behaviour it checks; a deep run ({@code ./mvnw -B verify -Pdeep}, or the system property
 * {@code test.deep=true}) runs it as many times as it takes to catch what happens once in dozens of runs,
 * for a change that touches its area. A test names its two depths, and CONTRIBUTING.md lists the tests that
 * have them.
 */
public final class TestDepth {

    /** The system property that asks for the deep run. */
    public static final String PROPERTY = "test.deep";

    private TestDepth() {}

    /** Returns whether this is a deep run. */
    public static boolean deep() {
        return Boolean.getBoolean(PROPERTY);
    }

    /**
     * Returns {@code usual} in the usual build and {@code deep} in a deep run.
     *
     * @throws IllegalArgumentException if either is less than 1, or deep is less than usual
     */
    public static int runs(int usual, int deep) {
        if (usual < 1 || deep < usual) {
            throw new IllegalArgumentException("runs must be 1 <= usual <= deep, were " + usual + " and " + deep);
        }
        return deep() ? deep : usual;
    }
}
