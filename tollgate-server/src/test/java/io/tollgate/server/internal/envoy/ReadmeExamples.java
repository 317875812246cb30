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

    private ReadmeExamples() {}
}
