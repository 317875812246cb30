/**
 * What lies beneath every surface of Tollgate, as one object: {@link io.tollgate.runtime.TollgateRuntime} opens the
 * store a configuration chooses (found through {@link io.tollgate.spi}), with what the surface adds to it, and closes
 * it all in order. The server and the Spring Boot starter run on it; a program that reads Tollgate's configuration
 * files may too.
 */
package io.tollgate.runtime;
