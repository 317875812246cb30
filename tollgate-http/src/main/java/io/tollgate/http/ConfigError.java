package io.tollgate.http;

/**
 * A configuration error, with the 1-based line of the file it is on when that is known (0 otherwise), so
 * that the reader of a file can name the file and the line.
 */
final class ConfigError extends IllegalArgumentException {

    private static final long serialVersionUID = 1L;

    private final int line;

    ConfigError(int line, String message) {
        super(message);
        this.line = line;
    }

    ConfigError(int line, String message, Throwable cause) {
        super(message, cause);
        this.line = line;
    }

    int line() {
        return line;
    }
}
