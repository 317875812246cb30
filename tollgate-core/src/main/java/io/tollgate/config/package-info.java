/**
 * The configuration tree that every surface reads its settings from ({@link io.tollgate.config.ConfigNode}),
 * whatever wrote it (a YAML file, Spring's {@code tollgate.*}, a map built in code), the keys each section may hold
 * ({@link io.tollgate.config.ConfigSection}), and its errors, which name the setting's path and line ({@link
 * io.tollgate.config.ConfigException}). Each module reads its own sections from it: tollgate-http the policies and
 * rules, each store its own section ({@link io.tollgate.spi.StoreProvider}).
 */
package io.tollgate.config;
