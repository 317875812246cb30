package io.tollgate;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * The lines a logger writes during each test (through {@code java.util.logging}, where {@code System.Logger}
 * goes when no other backend is installed), for tests of what the log says. Register it with
 * {@code @RegisterExtension} as an instance field.
 */
public final class LoggedLines implements BeforeEachCallback, AfterEachCallback {

    private final Logger logger;
    private final List<LogRecord> lines = new CopyOnWriteArrayList<>();
    private final Handler capture = new Handler() {
        @Override
        public void publish(LogRecord record) {
            lines.add(record);
        }

        @Override
        public void flush() {}

        @Override
        public void close() {}
    };

    /** Captures what the logger named after {@code type} writes. */
    public LoggedLines(Class<?> type) {
        this(type.getName());
    }

    /** Captures what the logger named {@code name} writes. */
    public LoggedLines(String name) {
        this.logger = Logger.getLogger(name);
    }

    /** The lines written so far in this test, in order. */
    public List<LogRecord> lines() {
        return lines;
    }

    @Override
    public void beforeEach(ExtensionContext context) {
        lines.clear();
        logger.addHandler(capture);
    }

    @Override
    public void afterEach(ExtensionContext context) {
        logger.removeHandler(capture);
    }
}
