package dev.sas.core;

import dev.sas.core.internal.SubmitGroup;
import dev.sas.core.spi.ClaimedTask;
import dev.sas.core.spi.NewTask;
import dev.sas.core.spi.StatusOutbox;
import dev.sas.core.spi.StateStore;
import dev.sas.core.spi.StorableText;
import dev.sas.core.spi.SubmitResult;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How {@link SasClient} submits: checks each key and input, encodes it, writes the tasks (group
 * commit, the host's transaction, or inserted already claimed by this node's runtime) and tells
 * the runtime's hooks. Thread-safe.
 */
final class Submissions {
    private static final Logger log = LoggerFactory.getLogger(SasClient.class);

    private final ClientCore core;
    private final StateStore store;
    private final SubmitGroup submitGroup;
    private final Set<String> registeredStatusChannels = ConcurrentHashMap.newKeySet();

    Submissions(ClientCore core) {
        this.core = core;
        this.store = core.store;
        this.submitGroup = new SubmitGroup(store);
    }

    /** One task; see {@link SasClient#submit(Workflow, String, Object, SubmitOptions)}. */
    <I> SubmitResult submit(Workflow<I> workflow, String businessKey, I input, SubmitOptions options) {
        Objects.requireNonNull(options, "options must not be null");
        checkStatusChannel(options.statusChannel());
        NewTask task = newTask(workflow, businessKey, input, options, core.now());
        TaskEvent received = received(task);
        Object transaction = transaction(options);
        String claimFor = transaction == null ? core.hooks.reserveStart(task) : null;
        if (claimFor != null) {
            return submitClaimed(task, received, options, claimFor);
        }
        SubmitResult result = transaction == null ? submitGroup.submit(task, received)
                : store.submit(task, received, transaction);
        afterSubmit(List.of(task), List.of(received), List.of(result), options, transaction != null, false);
        return result;
    }

    /**
     * A submit to this node's own runtime while it has room: the task is inserted already claimed
     * by it and starts after the commit, without a claim's round trip and commit.
     */
    private SubmitResult submitClaimed(NewTask task, TaskEvent received, SubmitOptions options, String instanceId) {
        SubmitResult result;
        try {
            result = store.claimedSubmits().orElseThrow(() -> new IllegalStateException("the store " + store
                    + " does not claim at submit")).submitClaimed(task, received, instanceId);
        } catch (RuntimeException | Error e) {
            core.hooks.startReserved(null);
            throw e;
        }
        try {
            afterSubmit(List.of(task), List.of(received), List.of(result), options, false, result.created());
        } finally {
            // listeners hear RECEIVED before the start's STEP_STARTED
            core.hooks.startReserved(result.created() ? ClaimedTask.atSubmit(task) : null);
        }
        return result;
    }

    /** Many tasks in one transaction; see {@link SasClient#submitAll(Workflow, Map, SubmitOptions)}. */
    <I> List<SubmitResult> submitAll(Workflow<I> workflow, Map<String, ? extends I> inputsByBusinessKey,
            SubmitOptions options) {
        Objects.requireNonNull(inputsByBusinessKey, "inputsByBusinessKey must not be null");
        Objects.requireNonNull(options, "options must not be null");
        checkStatusChannel(options.statusChannel());
        Instant now = core.now();
        List<NewTask> tasks = new ArrayList<>(inputsByBusinessKey.size());
        List<TaskEvent> received = new ArrayList<>(inputsByBusinessKey.size());
        for (Map.Entry<String, ? extends I> e : inputsByBusinessKey.entrySet()) {
            NewTask task = newTask(workflow, e.getKey(), e.getValue(), options, now);
            tasks.add(task);
            received.add(received(task));
        }
        if (tasks.isEmpty()) {
            return List.of();
        }
        Object transaction = transaction(options);
        List<SubmitResult> results = store.submitAll(tasks, received, transaction);
        afterSubmit(tasks, received, results, options, transaction != null, false);
        return results;
    }

    /**
     * Refuses a status channel no node consumes: its messages would wait in the outbox and the
     * application would never hear of its task. Channels found registered are remembered; an unknown
     * one is looked up in the store on every submit naming it (until it is registered).
     */
    private void checkStatusChannel(String channel) {
        if (channel == null || registeredStatusChannels.contains(channel) || core.hooks.consumesStatusChannel(channel)) {
            return;
        }
        StatusOutbox outbox = store.statusOutbox().orElseThrow(() -> new IllegalArgumentException("statusChannel '"
                + channel + "': the store " + store + " keeps no status channels; use a store that does"
                + " (JdbcStateStore, InMemoryStateStore) or submit without statusChannel"));
        registeredStatusChannels.addAll(outbox.channels());
        if (!registeredStatusChannels.contains(channel)) {
            throw new IllegalArgumentException("status channel '" + channel + "' is not registered: no runtime"
                    + " (RuntimeBuilder.statusChannel) or StatusConsumer has registered it with this store, so nobody"
                    + " would receive its messages. Register the channel first (on the node that consumes it), or"
                    + " submit without statusChannel");
        }
    }

    /**
     * Refuses what a database would alter or refuse in a key: an unpaired UTF-16 surrogate is
     * stored as '?' (so two different keys would become one task), and PostgreSQL rejects NUL.
     */
    private static void checkStorable(Workflow<?> workflow, String businessKey) {
        String problem = StorableText.problem("businessKey", businessKey);
        if (problem != null) {
            throw new IllegalArgumentException(problem + " (workflow '" + workflow.name() + "'); a database would"
                    + " store the key altered or not at all. Use valid Unicode text without NUL");
        }
    }

    private <I> NewTask newTask(Workflow<I> workflow, String businessKey, I input, SubmitOptions options, Instant now) {
        Objects.requireNonNull(workflow, "workflow must not be null");
        Objects.requireNonNull(businessKey, "businessKey must not be null");
        Objects.requireNonNull(input, "input must not be null (workflow '" + workflow.name() + "' business key '"
                + businessKey + "')");
        if (businessKey.isBlank()) {
            throw new IllegalArgumentException("businessKey must not be blank (workflow '" + workflow.name() + "')");
        }
        if (businessKey.length() > SasClient.MAX_BUSINESS_KEY_LENGTH) {
            throw new IllegalArgumentException("businessKey must be at most " + SasClient.MAX_BUSINESS_KEY_LENGTH
                    + " characters, was " + businessKey.length() + " (workflow '" + workflow.name() + "')");
        }
        checkStorable(workflow, businessKey);
        if (businessKey.endsWith(" ")) {
            throw new IllegalArgumentException("businessKey '" + businessKey + "' ends with a space (workflow '"
                    + workflow.name() + "'): MariaDB and MySQL compare keys ignoring trailing spaces, so it would"
                    + " name the same task as '" + businessKey.stripTrailing() + "'. SAS refuses such keys on every"
                    + " store; trim the key");
        }
        String what = "input for workflow '" + workflow.name() + "' business key '" + businessKey + "'";
        String encoded;
        try {
            encoded = workflow.inputCodec().encode(input);
        } catch (RuntimeException e) {
            throw new IllegalArgumentException(what + " cannot be encoded: " + e.getMessage(), e);
        }
        if (encoded == null || encoded.isBlank()) {
            throw new IllegalArgumentException(what + " encodes to a blank string; pass a real input");
        }
        int bytes = core.payloadLimit.excess(encoded);
        if (bytes >= 0) {
            throw new IllegalArgumentException(core.payloadLimit.message(what, bytes));
        }
        String unstorable = StorableText.problem(what + " (encoded)", encoded);
        if (unstorable != null) {
            throw new IllegalArgumentException(unstorable + "; no database can store it (PostgreSQL refuses it,"
                    + " others would alter it): have the workflow's input codec escape or encode it (JSON, base64)");
        }
        core.remember(workflow);
        StepDefinition<I> first = workflow.steps().get(0);
        TaskId id = TaskId.random();
        return new NewTask(id, workflow.name(), workflow.version(), businessKey, options.priority(),
                encoded, options.statusChannel(), first.name(), first.completeWithin(), now, now.plus(options.delay()),
                traceContext(workflow.name(), id));
    }

    /** The submitting thread's trace context; a tracing failure leaves the task untraced, never fails the submit. */
    private String traceContext(String workflow, TaskId id) {
        try {
            String context = core.config.tracing().capture(workflow, id);
            if (context != null && context.length() > NewTask.MAX_TRACE_CONTEXT_LENGTH) {
                log.warn("task {}: trace context of {} characters not stored (at most {})", id, context.length(),
                        NewTask.MAX_TRACE_CONTEXT_LENGTH);
                return null;
            }
            return context;
        } catch (RuntimeException e) {
            log.warn("task {}: capturing the trace context failed; the task is not traced ({})", id, e.toString());
            return null;
        }
    }

    private static TaskEvent received(NewTask t) {
        return new TaskEvent(t.taskId(), t.businessKey(), t.workflow(), TaskEvent.Type.RECEIVED, -1, null, 0,
                t.createdAt(), null);
    }

    /** The options' transaction, else the one the store finds the calling thread in, else null. */
    private Object transaction(SubmitOptions options) {
        return options.transaction() != null ? options.transaction() : store.hostTransaction();
    }

    /**
     * Logs each submission and hands the RECEIVED events of the tasks that were created to the
     * hooks; {@code claimed}: this node's runtime holds them already, so no claim is due.
     */
    private void afterSubmit(List<NewTask> tasks, List<TaskEvent> received, List<SubmitResult> results,
            SubmitOptions options, boolean inHostTransaction, boolean claimed) {
        List<TaskEvent> created = new ArrayList<>();
        for (int i = 0; i < results.size(); i++) {
            NewTask t = tasks.get(i);
            if (results.get(i).created()) {
                created.add(received.get(i));
                log.debug("task {} submitted: workflow {} v{}, business key {}", t.taskId(), t.workflow(),
                        t.workflowVersion(), t.businessKey());
            } else {
                log.debug("task {}: duplicate submission for business key {} ignored", results.get(i).taskId(),
                        t.businessKey());
            }
        }
        if (!created.isEmpty()) {
            core.hooks.submitted(created, options.statusChannel(), options.delay().isZero() && !claimed, inHostTransaction);
        }
    }
}
