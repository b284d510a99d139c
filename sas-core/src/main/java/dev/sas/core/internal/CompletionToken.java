package dev.sas.core.internal;

import dev.sas.core.TaskId;

/**
 * What a reply token names: which task, step and lease (the attempt's fencing token) the reply
 * answers. {@link CompletionTokens} turns it into signed text and back. Immutable. Not API.
 *
 * @param taskId the task
 * @param step the awaiting step's index
 * @param lease the attempt's lease
 */
public record CompletionToken(TaskId taskId, int step, long lease) {
}
