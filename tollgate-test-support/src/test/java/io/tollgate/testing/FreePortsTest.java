package io.tollgate.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;

/** Ports for test servers, out of the way of the source ports of outgoing connections and of each other. */
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

    @Test
    void neverHandsOutAPortThatIsTheBusPortOfAnother() {
        Set<Integer> picked =
                IntStream.range(0, 400).mapToObj(i -> FreePorts.pick()).collect(Collectors.toSet());

        Set<Integer> busPorts = picked.stream().map(port -> port + 10_000).collect(Collectors.toSet());
        busPorts.retainAll(picked);
        assertThat(busPorts)
                .as("ports handed out that a cluster node's bus also binds")
                .isEmpty();
    }

    @Test
    void anotherJvmPicksNoneOfThePortsThisOneHolds() throws Exception {
        Set<Integer> ours =
                IntStream.range(0, 300).mapToObj(i -> FreePorts.pick()).collect(Collectors.toSet());

        List<Integer> theirs = pickInAnotherJvm(300);

        assertThat(theirs).hasSize(300).doesNotContainAnyElementsOf(ours);
    }

    /** Ports picked by a fresh JVM on this test's class path. */
    private static List<Integer> pickInAnotherJvm(int count) throws IOException, InterruptedException {
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        Process child = new ProcessBuilder(
                        java.toString(),
                        "-cp",
                        System.getProperty("java.class.path"),
                        PortPicker.class.getName(),
                        Integer.toString(count))
                .redirectErrorStream(true)
                .start();
        String output = new String(child.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(child.waitFor(30, TimeUnit.SECONDS))
                .as("the other JVM exits")
                .isTrue();
        assertThat(child.exitValue())
                .as("the other JVM's exit status; it said: %s", output)
                .isZero();
        return output.lines().map(Integer::parseInt).collect(Collectors.toList());
    }

    /** Prints as many ports as its argument asks, one per line: the other JVM of the test above. */
    static final class PortPicker {
        public static void main(String[] arguments) {
            Set<Integer> picked = new HashSet<>();
            for (int i = 0; i < Integer.parseInt(arguments[0]); i++) {
                picked.add(FreePorts.pick());
            }
            picked.forEach(System.out::println);
        }
    }
}
