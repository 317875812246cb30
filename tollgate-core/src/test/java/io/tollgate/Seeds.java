package io.tollgate;

import java.util.SplittableRandom;
import java.util.stream.LongStream;

/**
 * The cases of a property test, as seeds for {@link BucketGenerators}: a fixed series, so that every run
 * checks the same cases and a failure is reproduced by running again. A parameterized test names each case
 * by its seed; {@code -Dtollgate.seed=<seed>} runs that case alone.
 */
public final class Seeds {

    /** The system property that picks one case to run alone. */
    public static final String ONLY = "tollgate.seed";

    private static final long SERIES = 0x7011_6A7E_2026_1203L;

    private Seeds() {}

    /** Returns {@code cases} seeds, or only the one {@value #ONLY} names. */
    public static LongStream of(int cases) {
        String only = System.getProperty(ONLY);
        if (only != null) {
            return LongStream.of(Long.parseLong(only.strip()));
        }
        SplittableRandom series = new SplittableRandom(SERIES);
        return LongStream.generate(series::nextLong).limit(cases);
    }
}
