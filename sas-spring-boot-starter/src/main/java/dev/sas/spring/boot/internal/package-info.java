/** Implementation of the Spring Boot starter. Not API: anything here may change without notice. */
package dev.sas.spring.boot.internal;
