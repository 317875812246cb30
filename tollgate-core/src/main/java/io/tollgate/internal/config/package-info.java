/**
 * The configuration tree that every surface reads its settings from ({@link
 * io.tollgate.internal.config.ConfigNode}), whatever wrote it (a YAML file, a properties file, Spring's {@code
 * tollgate.*}), and its errors, which name the setting's path and line ({@link
 * io.tollgate.internal.config.ConfigException}). Each module reads its own sections from it: tollgate-http the
 * policies and rules, tollgate-redis the {@code redis} section.
 *
 * <p><b>No compatibility promise.</b> Exported only to Tollgate's own modules; it may change in any release.
 */
package io.tollgate.internal.config;
