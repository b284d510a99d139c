/** Implementation of the console. Not API: may change in any release. */
package dev.sas.console.internal;
