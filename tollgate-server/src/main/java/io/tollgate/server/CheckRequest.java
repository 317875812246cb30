package io.tollgate.server;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.StreamReadFeature;
import io.tollgate.LimiterArguments;
import io.tollgate.Policy;
import java.io.CharConversionException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * A {@code POST /v1/check} body, read straight into typed checks: {@code {"policy": "per-client", "key":
 * "alice", "cost": 1}}, or {@code {"checks": [...]}} with 1 to {@value #MAX_CHECKS} of them. Every field is
 * checked as it is read, and a bad one is a {@link BadRequest} that names it, such as {@code
 * checks[2].cost must be a whole number, was a string}.
 *
 * @param checks the checks, in order
 * @param batch whether the body was a batch ({@code checks}), answered with {@code results}
 */
record CheckRequest(List<Check> checks, boolean batch) {

    /**
     * The longest key a request may name, in characters: a bound on the request, past which it is refused (400).
     * It is not the key rule: a key of up to this length is decided under the one key rule as everywhere
     * ({@link io.tollgate.LimiterArguments#boundedKey}: past 256 characters its bucket is kept under its
     * digest).
     */
    static final int MAX_KEY_FIELD_LENGTH = 1024;

    /** The most checks in one batch. */
    static final int MAX_CHECKS = 100;

    private static final JsonFactory JSON = JsonFactory.builder()
            .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
            .streamReadConstraints(StreamReadConstraints.builder()
                    .maxNestingDepth(8)
                    .maxStringLength(CheckApi.MAX_BODY_BYTES)
                    .build())
            .build();

    /** One request for tokens: of an existing policy, a bounded key and a cost the policy could admit. */
    record Check(Policy policy, String key, long cost) {}

    /** A request that cannot be decided, and the status and detail it is answered with. */
    static final class BadRequest extends Exception {
        private static final long serialVersionUID = 1L;
        private final int status;

        BadRequest(int status, String detail) {
            super(detail, null, false, false);
            this.status = status;
        }

        /** Returns the status to answer with. */
        int status() {
            return status;
        }
    }

    /** The fields of one JSON object as read, before they are checked against the policies. */
    private static final class Fields {
        private final List<String> names = new ArrayList<>();
        private String policy;
        private String key;
        private Long cost;
        private List<Fields> checks;
    }

    /**
     * Reads a body: one check, or {@code checks} (1 to {@value #MAX_CHECKS}), each of an existing policy, a
     * key of 1 to {@value #MAX_KEY_FIELD_LENGTH} characters and a cost the policy could admit (default 1).
     *
     * @throws BadRequest saying what is wrong and with which status: 404 for an unknown policy, else 400
     */
    static CheckRequest parse(byte[] body, Map<String, Policy> policies) throws BadRequest {
        Fields fields = fields(body);
        if (fields.checks == null) {
            return new CheckRequest(List.of(check(fields, "", policies, Policy::checkCost)), false);
        }
        List<String> besides =
                fields.names.stream().filter(name -> !name.equals("checks")).toList();
        if (!besides.isEmpty()) {
            throw new BadRequest(
                    400, "give either checks or policy, key and cost, not both; found " + String.join(", ", besides));
        }
        if (fields.checks.isEmpty()) {
            throw new BadRequest(400, "checks must hold 1 to " + MAX_CHECKS + " checks, has 0");
        }
        List<Check> checks = new ArrayList<>(fields.checks.size());
        for (int i = 0; i < fields.checks.size(); i++) {
            checks.add(check(fields.checks.get(i), "checks[" + i + "].", policies, Policy::checkCost));
        }
        return new CheckRequest(checks, true);
    }

    /**
     * Reads the body of a charge ({@code POST /v1/charge}): one object of an existing policy, a key as for a
     * check, and a cost, required, of at least 1, which may exceed the capacity (up to what the bucket's
     * arithmetic counts exactly).
     *
     * @throws BadRequest saying what is wrong and with which status: 404 for an unknown policy, else 400
     */
    static Check parseCharge(byte[] body, Map<String, Policy> policies) throws BadRequest {
        Fields fields = fields(body);
        if (fields.checks != null) {
            throw new BadRequest(400, "a charge is one object of policy, key and cost; checks are for /v1/check");
        }
        if (fields.cost == null) {
            throw new BadRequest(400, "cost is required: the tokens to take, at least 1");
        }
        return check(fields, "", policies, (policy, cost) -> LimiterArguments.checkCharge("charge", policy, cost));
    }

    /** Checks a cost against a policy, throwing {@code IllegalArgumentException} with what is wrong. */
    private interface CostCheck {
        void check(Policy policy, long cost);
    }

    private static Fields fields(byte[] body) throws BadRequest {
        if (!isUtf8(body)) {
            throw new BadRequest(400, "the body must be JSON text in UTF-8");
        }
        Fields fields;
        try (JsonParser parser = JSON.createParser(body)) {
            if (parser.nextToken() != JsonToken.START_OBJECT) {
                throw new BadRequest(
                        400,
                        "the body must be a JSON object, such as {\"policy\": \"per-client\", \"key\": \"alice\", \"cost\": 1}");
            }
            fields = object(parser, "", true);
            if (parser.nextToken() != null) {
                throw new BadRequest(400, "the body must hold one JSON object and nothing after it");
            }
        } catch (JsonProcessingException e) {
            throw new BadRequest(400, "malformed JSON: " + e.getOriginalMessage());
        } catch (CharConversionException e) {
            // Bytes that are no text in the encoding the parser detected (UTF-32 for a body that starts with zeros)
            throw new BadRequest(400, "the body must be JSON text in UTF-8");
        } catch (IOException e) {
            throw new UncheckedIOException(e); // reading from an array fails in no other way
        }
        return fields;
    }

    /**
     * Whether {@code body} is UTF-8 as RFC 8259 has JSON text, strictly: no zero byte (which the parser would take
     * for UTF-16 or UTF-32 and read), no overlong form (which it would read as the character it stands for: {@code
     * C0 AF} as {@code /}), no surrogate. Bodies of ASCII, nearly all of them, take one pass and no allocation.
     */
    static boolean isUtf8(byte[] body) {
        boolean ascii = true;
        for (byte b : body) {
            if (b == 0) {
                return false;
            }
            ascii &= b > 0;
        }
        if (ascii) {
            return true;
        }
        try {
            StandardCharsets.UTF_8
                    .newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(body));
            return true;
        } catch (CharacterCodingException e) {
            return false;
        }
    }

    private static Fields object(JsonParser parser, String at, boolean top) throws IOException, BadRequest {
        Fields fields = new Fields();
        while (parser.nextToken() == JsonToken.FIELD_NAME) {
            String name = parser.currentName();
            JsonToken value = parser.nextToken();
            fields.names.add(name);
            switch (name) {
                case "policy", "key" -> {
                    if (value != JsonToken.VALUE_STRING) {
                        throw new BadRequest(400, at + name + " must be a string, was " + describe(value));
                    }
                    if (name.equals("policy")) {
                        fields.policy = parser.getText();
                    } else {
                        fields.key = parser.getText();
                    }
                }
                case "cost" -> {
                    if (value != JsonToken.VALUE_NUMBER_INT) {
                        throw new BadRequest(400, at + "cost must be a whole number, was " + describe(value));
                    }
                    if (parser.getNumberType() == JsonParser.NumberType.BIG_INTEGER) {
                        throw new BadRequest(400, at + "cost " + parser.getText() + " is too large");
                    }
                    fields.cost = parser.getLongValue();
                }
                case "checks" -> {
                    if (!top) {
                        throw new BadRequest(400, at + "checks cannot be nested");
                    }
                    if (value != JsonToken.START_ARRAY) {
                        throw new BadRequest(400, "checks must be an array of checks, was " + describe(value));
                    }
                    List<Fields> checks = new ArrayList<>();
                    while (parser.nextToken() != JsonToken.END_ARRAY) {
                        String element = "checks[" + checks.size() + "].";
                        if (parser.currentToken() != JsonToken.START_OBJECT) {
                            throw new BadRequest(
                                    400,
                                    element.substring(0, element.length() - 1) + " must be an object, was "
                                            + describe(parser.currentToken()));
                        }
                        if (checks.size() == MAX_CHECKS) {
                            throw new BadRequest(400, "checks must hold 1 to " + MAX_CHECKS + " checks, has more");
                        }
                        checks.add(object(parser, element, false));
                    }
                    fields.checks = checks;
                }
                default ->
                    throw new BadRequest(
                            400,
                            "unknown field " + at + name + "; a check has policy, key and cost"
                                    + (top ? ", or a batch has checks" : ""));
            }
        }
        return fields;
    }

    /**
     * Returns the policy named {@code name}.
     *
     * @throws BadRequest 404, naming the defined policies, if there is none of that name
     */
    static Policy policy(String name, Map<String, Policy> policies) throws BadRequest {
        Policy policy = policies.get(name);
        if (policy == null) {
            throw new BadRequest(
                    404,
                    "unknown policy '" + name + "'; defined: "
                            + (policies.isEmpty() ? "none" : String.join(", ", new TreeSet<>(policies.keySet()))));
        }
        return policy;
    }

    private static Check check(Fields fields, String at, Map<String, Policy> policies, CostCheck costCheck)
            throws BadRequest {
        String policyName = fields.policy;
        if (policyName == null) {
            throw new BadRequest(400, at + "policy is required");
        }
        Policy policy = policy(policyName, policies);
        String key = fields.key;
        if (key == null || key.isEmpty()) {
            throw new BadRequest(400, at + "key is required: a non-empty string that names the client");
        }
        if (key.length() > MAX_KEY_FIELD_LENGTH) {
            throw new BadRequest(
                    400, at + "key is " + key.length() + " characters long; the most is " + MAX_KEY_FIELD_LENGTH);
        }
        long cost = fields.cost == null ? 1 : fields.cost;
        try {
            costCheck.check(policy, cost);
        } catch (IllegalArgumentException e) {
            throw new BadRequest(400, at + e.getMessage());
        }
        return new Check(policy, key, cost);
    }

    private static String describe(JsonToken token) {
        if (token == null) {
            return "nothing";
        }
        return switch (token) {
            case VALUE_STRING -> "a string";
            case VALUE_NUMBER_INT, VALUE_NUMBER_FLOAT -> "a number";
            case VALUE_TRUE, VALUE_FALSE -> "a boolean";
            case VALUE_NULL -> "null";
            case START_ARRAY -> "an array";
            case START_OBJECT -> "an object";
            default -> token.asString();
        };
    }
}
