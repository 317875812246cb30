package io.tollgate.server.internal.access;

import io.tollgate.Policy;
import io.tollgate.config.ConfigException;
import io.tollgate.config.ConfigNode;
import io.tollgate.config.ConfigSection;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import javax.security.auth.x500.X500Principal;

/** Reads the server file's {@code callers} section into {@link Callers}. Stateless. */
public final class CallersSection {

    /** One caller of the decision API and Envoy's service. */
    public static final ConfigSection CALLER =
            ConfigSection.of("caller", "name", "token", "certificate-subject", "policies", "key-prefix");

    private CallersSection() {}

    /**
     * Reads the callers: each a unique name, a token (a {@linkplain ConfigNode#secret secret}) or a certificate
     * subject or both, and optionally the policies it may ask of and the prefix of its keys.
     *
     * @param policies the policies the file defines, by name
     * @throws ConfigException naming the setting that is wrong
     */
    public static Callers read(ConfigNode node, Map<String, Policy> policies) {
        if (node.isPresent() && node.elements().isEmpty()) {
            throw node.error("must list at least one caller, each with a name and a token or a certificate-subject");
        }
        List<Callers.Caller> callers = new ArrayList<>();
        Map<String, String> names = new HashMap<>();
        List<byte[]> tokens = new ArrayList<>();
        for (ConfigNode caller : node.elements()) {
            caller.checkKeys(CALLER);
            ConfigNode nameNode = caller.child("name");
            String name = nameNode.requiredString();
            if (!Callers.NAME.matcher(name).matches()) {
                throw nameNode.error("must be 1 to 64 letters, digits, '_', '-' or '.', was '" + name + "'");
            }
            if (names.putIfAbsent(name, nameNode.path()) != null) {
                throw nameNode.error("'" + name + "' is also the name of " + names.get(name));
            }
            ConfigNode tokenNode = caller.child("token");
            String token = tokenNode.secret(null);
            byte[] digest = null;
            if (token != null) {
                if (!token.chars().allMatch(c -> c > 0x20 && c < 0x7f)) {
                    throw tokenNode.error("must be printable ASCII without spaces, as a bearer token is sent");
                }
                digest = Callers.digest(token);
                for (int i = 0; i < tokens.size(); i++) {
                    if (tokens.get(i) != null && Arrays.equals(tokens.get(i), digest)) {
                        throw tokenNode.error(
                                "is the token of " + callers.get(i).name() + " too; give each caller" + " its own");
                    }
                }
            }
            ConfigNode subjectNode = caller.child("certificate-subject");
            String subject = subjectNode.isPresent() ? certificateSubject(subjectNode) : null;
            if (token == null && subject == null) {
                throw caller.error("needs a token, a certificate-subject (with a TLS port that asks for client"
                        + " certificates), or both");
            }
            Set<String> allowed = new LinkedHashSet<>();
            for (ConfigNode policy : caller.child("policies").elements()) {
                String policyName = policy.requiredString();
                if (!policies.containsKey(policyName)) {
                    throw policy.error("unknown policy '" + policyName + "'; defined: "
                            + (policies.isEmpty() ? "none" : String.join(", ", new TreeSet<>(policies.keySet()))));
                }
                allowed.add(policyName);
            }
            tokens.add(digest);
            callers.add(new Callers.Caller(
                    name, digest, subject, allowed, caller.child("key-prefix").string("")));
        }
        return new Callers(callers);
    }

    /** Reads a certificate's subject as an X.500 name, kept in its canonical form for comparison. */
    private static String certificateSubject(ConfigNode node) {
        String text = node.requiredString();
        try {
            return new X500Principal(text).getName(X500Principal.CANONICAL);
        } catch (IllegalArgumentException e) {
            throw node.error("must be an X.500 name such as CN=checkout,O=Example, was '" + text + "'");
        }
    }
}
