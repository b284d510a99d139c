/**
 * The SAS public API. Define a {@link dev.sas.core.Workflow} of steps and
 * {@link dev.sas.core.Agent} calls; submit, find, await and operate tasks from any tier with a
 * {@link dev.sas.core.SasClient}; run the Scheduler, Agents and Supervisor with a
 * {@link dev.sas.core.SasRuntime}; watch tasks through {@link dev.sas.core.TaskHandle},
 * {@link dev.sas.core.TaskInfo}, {@link dev.sas.core.TaskEvent}s and {@link dev.sas.core.Alert}s.
 */
package dev.sas.core;
