/**
 * The SAS public API: define a {@link dev.sas.core.Workflow} of {@link dev.sas.core.Step}s and
 * {@link dev.sas.core.Agent} calls, run it with {@link dev.sas.core.Sas}, and watch tasks through
 * {@link dev.sas.core.TaskEvent}s, {@link dev.sas.core.TaskInfo} and {@link dev.sas.core.Alert}s.
 */
package dev.sas.core;
