/** Implementation of the runtime. Not API: anything here may change without notice. */
package dev.sas.core.internal;
