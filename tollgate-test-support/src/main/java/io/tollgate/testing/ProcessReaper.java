package io.tollgate.testing;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/** Kills every redis-server process this JVM started when the JVM exits, so that none outlives a test run. */
final class ProcessReaper {

    private static final Set<Process> PROCESSES = ConcurrentHashMap.newKeySet();

    static {
        Runtime.getRuntime()
                .addShutdownHook(new Thread(() -> PROCESSES.forEach(Process::destroyForcibly), "redis-reaper"));
    }

    private ProcessReaper() {}

    static void register(Process process) {
        PROCESSES.add(process);
        process.onExit().thenRun(() -> PROCESSES.remove(process));
    }
}
