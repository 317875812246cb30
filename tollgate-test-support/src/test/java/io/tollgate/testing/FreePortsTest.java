package io.tollgate.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;

/** Ports for test servers, out of the way of the source ports of outgoing connections. */
class FreePortsTest {

    @Test
    @EnabledOnOs(OS.LINUX) // reads the kernel's ephemeral range
    void picksPortsWhoseClusterBusPortIsBelowTheEphemeralRange() throws Exception {
        int ephemeralLow = Integer.parseInt(Files.readAllLines(Path.of("/proc/sys/net/ipv4/ip_local_port_range"))
                .get(0)
                .trim()
                .split("\\s+")[0]);

        for (int i = 0; i < 100; i++) {
            int port = FreePorts.pick();

            assertThat(port + 10_000).as("the bus port of %d", port).isLessThan(ephemeralLow);
        }
    }
}
