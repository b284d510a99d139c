/**
 * The Spring Boot starter: {@link dev.sas.spring.boot.SasAutoConfiguration} builds a SAS store,
 * runtime and client on the application's {@code DataSource}, from {@code sas.*}
 * ({@link dev.sas.spring.boot.SasProperties}) and the application's {@code Workflow} beans, starts and
 * stops the runtime with the context, lets a plain {@code submit} join the caller's Spring
 * transaction, and adds a health indicator and Micrometer meters when Actuator and
 * {@code sas-micrometer} are present, and the operator console in the application's server with
 * {@code sas.console.enabled=true} ({@link dev.sas.spring.boot.SasConsoleAutoConfiguration}). One
 * jar for Spring Boot 4 and 3. An application in which it cannot configure SAS fails at start with
 * a {@link dev.sas.spring.boot.SasStartupException}.
 */
package dev.sas.spring.boot;
