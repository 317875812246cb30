package io.tollgate.server.internal.envoy;

/** envoyproxy/ratelimit's README examples, written again as test data, for every test of the Envoy service. */
public final class ReadmeExamples {

    /** The README's first example: a limit per database value. */
    public static final String MONGO = """
            domain: mongo_cps
            descriptors:
              - key: database
                value: users
                rate_limit:
                  unit: second
                  requests_per_unit: 500
              - key: database
                value: default
                rate_limit:
                  unit: second
                  requests_per_unit: 500
            """;

    /** The README's nested example: marketing messages per number per day, and all messages per number. */
    public static final String MESSAGING = """
            domain: messaging
            descriptors:
              - key: message_type
                value: marketing
                descriptors:
                  - key: to_number
                    rate_limit:
                      unit: day
                      requests_per_unit: 5
              - key: to_number
                rate_limit:
                  unit: day
                  requests_per_unit: 100
            """;

    /**
     * The README's example 7: the second limit replaces the one named {@code specific_limit} in a request that
     * matches both.
     */
    public static final String REPLACES = """
            domain: example7
            descriptors:
              - key: key_1
                value: value_1
                descriptors:
                  - key: user
                    value: bkthomps
                    rate_limit:
                      name: specific_limit
                      requests_per_unit: 5
                      unit: second
              - key: key_2
                value: value_2
                descriptors:
                  - key: user
                    value: bkthomps
                    rate_limit:
                      replaces:
                        - name: specific_limit
                      requests_per_unit: 10
                      unit: second
            """;

    /** The README's example 8: a key alone whose metrics name each value it matched. */
    public static final String DETAILED_METRIC = """
            domain: example8
            descriptors:
              - key: key1
                detailed_metric: true
                rate_limit:
                  unit: minute
                  requests_per_unit: 10
              - key: key1
                value: value1
                rate_limit:
                  unit: minute
                  requests_per_unit: 20
            """;

    /** The README's example 9: a value ending in {@code *} matches every value it starts. */
    public static final String WILDCARD = """
            domain: example9
            descriptors:
              - key: key1
                value: value*
                rate_limit:
                  unit: minute
                  requests_per_unit: 20
            """;

    private ReadmeExamples() {}
}
