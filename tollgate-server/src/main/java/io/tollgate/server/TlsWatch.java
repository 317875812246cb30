package io.tollgate.server;

import io.netty.util.concurrent.DefaultThreadFactory;
import io.tollgate.server.internal.tls.TlsFiles;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Reads the TLS files of the server's ports again every second, on a thread of its own, so that a rotated
 * certificate is presented from the next handshake on without a restart (as the configuration file is watched).
 * Thread-safe.
 */
final class TlsWatch implements AutoCloseable {

    /** How often the files are read, in milliseconds: a certificate rotated is in use within about this. */
    static final long INTERVAL_MILLIS = 1_000;

    private final ScheduledExecutorService thread;

    private TlsWatch(List<TlsFiles> files) {
        thread = Executors.newSingleThreadScheduledExecutor(new DefaultThreadFactory("tollgate-tls-watch", true));
        thread.scheduleWithFixedDelay(
                () -> files.forEach(TlsFiles::reloadIfChanged),
                INTERVAL_MILLIS,
                INTERVAL_MILLIS,
                TimeUnit.MILLISECONDS);
    }

    /** Starts watching {@code files}; null when there are none, and nothing to watch. */
    static TlsWatch start(List<TlsFiles> files) {
        return files.isEmpty() ? null : new TlsWatch(List.copyOf(files));
    }

    @Override
    public void close() {
        thread.shutdownNow();
    }
}
