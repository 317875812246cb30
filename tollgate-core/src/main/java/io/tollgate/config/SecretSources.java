package io.tollgate.config;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;

/**
 * Reads a secret from where a setting points ({@link ConfigNode#secret}): an environment variable or a file, as
 * Kubernetes mounts a secret. No message holds the secret: each names the setting, the variable or the file.
 */
final class SecretSources {

    private SecretSources() {}

    /**
     * Returns the secret that {@code env} (a variable's name) or else {@code file} (a path) points to, surrounding
     * whitespace trimmed.
     *
     * @throws ConfigException if the variable is unset or blank, or the file cannot be read or is empty
     */
    static String read(ConfigNode env, ConfigNode file) {
        if (env.isPresent()) {
            String name = env.requiredString();
            String read = System.getenv(name);
            if (read == null || read.isBlank()) {
                throw env.error("the environment variable " + name + " is not set");
            }
            return read.strip();
        }
        String path = file.requiredString();
        String read;
        try {
            read = Files.readString(Path.of(path), StandardCharsets.UTF_8).strip();
        } catch (IOException | InvalidPathException e) {
            throw file.error("cannot read the file '" + path + "': "
                    + (e instanceof NoSuchFileException
                            ? "no such file"
                            : e.getClass().getSimpleName()));
        }
        if (read.isEmpty()) {
            throw file.error("the file '" + path + "' is empty");
        }
        return read;
    }
}
