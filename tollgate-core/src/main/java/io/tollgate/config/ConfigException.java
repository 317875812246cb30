package io.tollgate.config;

/**
 * A configuration value that is missing or wrong. The message names the setting's path and the problem,
 * such as {@code rules[1].cost: must be a whole number, was 'ten'}; {@link #line()} is the line of the file
 * it is on, when that is known.
 */
public final class ConfigException extends IllegalArgumentException {

    private static final long serialVersionUID = 1L;

    private final int line;

    /** Creates an error on {@code line} (1-based; 0 if unknown). */
    public ConfigException(int line, String message) {
        super(message);
        this.line = Math.max(0, line);
    }

    /** Creates an error on {@code line} (1-based; 0 if unknown) that {@code cause} led to. */
    public ConfigException(int line, String message, Throwable cause) {
        super(message, cause);
        this.line = Math.max(0, line);
    }

    /** Returns the 1-based line of the file the bad value is on, or 0 if unknown. */
    public int line() {
        return line;
    }

    /** Returns the message as a compiler would write it for {@code fileName}: {@code file:line: message}. */
    public String messageIn(String fileName) {
        return fileName + (line > 0 ? ":" + line : "") + ": " + getMessage();
    }
}
