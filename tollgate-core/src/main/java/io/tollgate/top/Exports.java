package io.tollgate.top;

import io.tollgate.top.HeavyHitters.Measure;
import io.tollgate.top.HeavyHitters.Window;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The bytes an instance publishes of its counts ({@link HeavyHitters#export()}) and how another reads one
 * summary back from them. The format: a tag with its version ({@link #FORMAT}), the number of policies, and for
 * each its name and four summaries (refused and charged, each over the last minute and the last 15 minutes) as
 * {@link SpaceSaving#writeTo} writes them. Stateless.
 */
final class Exports {

    /** "TGT" and the format's version, 1: a reader leaves out bytes that do not begin with it. */
    static final int FORMAT = 0x54475401;

    /** The most policies an export may hold, as {@link HeavyHitters#MAX_POLICIES} counts. */
    private static final int MAX_POLICIES = HeavyHitters.MAX_POLICIES;

    private Exports() {}

    static byte[] write(Map<String, RecentTraffic[]> byPolicy, int capacity, long nowMicros) {
        List<Map.Entry<String, RecentTraffic[]>> policies = new ArrayList<>(byPolicy.entrySet());
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(256 + policies.size() * capacity * 64);
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            out.writeInt(FORMAT);
            out.writeInt(policies.size());
            for (Map.Entry<String, RecentTraffic[]> policy : policies) {
                byte[] name = policy.getKey().getBytes(StandardCharsets.UTF_8);
                out.writeInt(name.length);
                out.write(name);
                for (Measure by : Measure.values()) {
                    for (Window window : Window.values()) {
                        policy.getValue()[by.ordinal()]
                                .window(window.minutes, nowMicros)
                                .writeTo(out);
                    }
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e); // a ByteArrayOutputStream does not fail
        }
        return bytes.toByteArray();
    }

    /**
     * Returns the summary of {@code policy}, {@code by}, over {@code window} in {@code export}, or null if it holds
     * no such policy.
     *
     * @throws IOException if the bytes are not an export of this format
     */
    static SpaceSaving find(byte[] export, String policy, Measure by, Window window) throws IOException {
        try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(export))) {
            if (export.length < 8 || in.readInt() != FORMAT) {
                throw new IOException("not an export of format " + Integer.toHexString(FORMAT));
            }
            int policies = in.readInt();
            if (policies < 0 || policies > MAX_POLICIES) {
                throw new IOException("not an export: " + policies + " policies");
            }
            for (int p = 0; p < policies; p++) {
                int length = in.readInt();
                if (length < 0 || length > SpaceSaving.MAX_KEY_BYTES) {
                    throw new IOException("not an export: a policy name of " + length + " bytes");
                }
                byte[] name = new byte[length];
                in.readFully(name);
                boolean wanted = new String(name, StandardCharsets.UTF_8).equals(policy);
                for (Measure measure : Measure.values()) {
                    for (Window span : Window.values()) {
                        SpaceSaving summary = SpaceSaving.read(in);
                        if (wanted && measure == by && span == window) {
                            return summary;
                        }
                    }
                }
            }
            return null;
        }
    }
}
