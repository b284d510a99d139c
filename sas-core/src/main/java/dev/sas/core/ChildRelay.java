package dev.sas.core;

import dev.sas.core.internal.ChildWatch;
import dev.sas.core.internal.TaskLog;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Completes child task steps ({@link StepBuilder#childTask}) whose child has ended, through
 * {@link StepCompletionClient}, fenced by the parent's step and lease. Two ways find them: a child
 * that ended on this node names its parent ({@link #ended}), which the next pass delivers; and a scan,
 * on the first pass and every {@value #SCAN_EVERY} passes after, reads the tasks of this runtime's
 * workflows that await a child (through the store's state index, {@value #MAX_PER_PASS} at most per
 * workflow and scan, going on where the last scan stopped), finds each one's child by its derived
 * business key and delivers those that ended. The scan finds what the first way cannot: a child that
 * ended on a node without the parent's workflow, or on a node that died before its next pass. What
 * is kept in memory is only a hint, so a node that dies loses nothing; a delivery repeated answers
 * {@link CompletionOutcome#ALREADY_COMPLETED} or {@link CompletionOutcome#STALE} and changes nothing.
 * Thread-safe: {@link #ended} from any thread, {@link #deliverEnded} from the supervisor's.
 */
final class ChildRelay implements ChildWatch {
    private static final Logger log = LoggerFactory.getLogger(ChildRelay.class);

    /** Most awaiting parents read per workflow and scan; the next scan goes on from there. */
    static final int MAX_PER_PASS = 2_000;
    /** A scan runs on the first pass and then on every this many passes. */
    static final int SCAN_EVERY = 10;
    /** Most parents named by children that ended here kept for the next pass; past it the scan finds them. */
    private static final int MAX_HINTS = 10_000;
    private static final int PAGE = 500;

    private final SasClient client;
    private final List<Workflow<?>> workflows;
    private final Set<String> parents = new LinkedHashSet<>();
    private final Queue<TaskId> hinted = new ConcurrentLinkedQueue<>();
    /** Per fan-out unit workflow, its concurrency K: an element that ended here lets the next of its lane go on. */
    private final Map<String, FanOutLanes.Slot> lanes = new HashMap<>();
    private final Queue<LaneEnd> laneEnds = new ConcurrentLinkedQueue<>();
    private final AtomicInteger hints = new AtomicInteger();
    /** Per parent workflow, the last parent the previous scan read, when it stopped before the end. */
    private final Map<String, TaskInfo> resumeAfter = new HashMap<>();
    private int passes;

    ChildRelay(SasClient client, List<Workflow<?>> workflows) {
        this.client = client;
        this.workflows = List.copyOf(workflows);
        for (Workflow<?> w : workflows) {
            if (w.steps().stream().anyMatch(StepDefinition::startsChildTask)) {
                parents.add(w.name());
            }
            if (!w.steps().isEmpty() && w.steps().get(0).slot() != null) {
                lanes.put(w.name(), w.steps().get(0).slot());
            }
        }
    }

    /** A fan-out element that ended on this node: its unit's workflow and key, whether it failed, passes tried. */
    private record LaneEnd(String workflow, String businessKey, boolean failed, int tries) {
    }

    /** Scans that pass over fan-outs before one looks at them too. */
    static final int LANE_SCAN_EVERY = 10;
    /** Passes a lane's next element is looked for while it has not yet come to wait for its turn. */
    private static final int LANE_TRIES = 100;

    /** Whether any of the workflows has a child task step (else the runtime needs no relay). */
    boolean needed() {
        return !parents.isEmpty();
    }

    /**
     * A task reached a terminal state on this node ({@code event} is its terminal event): if it is a
     * child task, its parent is delivered on the next pass. Quick; called on the publishing thread.
     */
    void ended(TaskEvent event) {
        if (lanes.containsKey(event.workflow()) && FanOutLanes.index(event.businessKey()) >= 0) {
            if (hints.incrementAndGet() <= MAX_HINTS) {
                laneEnds.add(new LaneEnd(event.workflow(), event.businessKey(),
                        event.type() != TaskEvent.Type.PROCESSED, 0));
            } else {
                hints.decrementAndGet(); // the scan finds the lane's next element and the parent
            }
            return;
        }
        ChildCall.parentOf(event.businessKey()).ifPresent(parent -> {
            TaskId id;
            try {
                id = TaskId.of(parent.get(0));
            } catch (IllegalArgumentException notAChildKey) {
                return; // a business key that only looks like a child's
            }
            if (hints.incrementAndGet() <= MAX_HINTS) {
                hinted.add(id);
            } else {
                hints.decrementAndGet(); // the scan finds it
            }
        });
    }

    @Override
    public int deliverEnded() {
        int delivered = nextInLanes();
        Set<TaskId> distinct = new LinkedHashSet<>(); // many units of one parent ending in a pass: one look
        TaskId hint;
        while ((hint = hinted.poll()) != null) {
            hints.decrementAndGet();
            distinct.add(hint);
        }
        for (TaskId id : distinct) {
            TaskInfo parent = client.find(id).orElse(null);
            if (parent != null && parent.status() == TaskStatus.AWAITING_COMPLETION) {
                delivered += deliver(parent, true) ? 1 : 0;
            }
        }
        int pass = passes++;
        if (pass % SCAN_EVERY == 0) {
            // fan-out elements and the fan-out steps waiting for them are found by the hints above; the scan
            // of them, which reads one unit per element, is the fallback of a node that died: less often
            boolean full = pass % (SCAN_EVERY * LANE_SCAN_EVERY) == 0;
            for (String workflow : parents) {
                if (full || !lanes.containsKey(workflow)) {
                    delivered += scan(workflow, full);
                }
            }
        }
        return delivered;
    }

    /**
     * For each fan-out element that ended here, lets the next element of its lane go on; the parent is
     * looked at when the lane has no next element or the element failed (else another element is to
     * run, so the parent cannot be done).
     */
    private int nextInLanes() {
        int released = 0;
        List<LaneEnd> again = new ArrayList<>();
        LaneEnd end;
        while ((end = laneEnds.poll()) != null) {
            hints.decrementAndGet();
            try {
                FanOutLanes.Slot slot = lanes.get(end.workflow());
                String nextKey = FanOutLanes.shifted(end.businessKey(), slot.concurrency());
                TaskInfo next = client.find(end.workflow(), nextKey).orElse(null);
                if (end.failed() && !slot.afterFailure()) {
                    next = null; // the fan-out fails: its parent cancels the elements still waiting
                } else if (next != null && FanOutLanes.release(client, next)) {
                    released++;
                    log.debug("fan-out element {} ended; {} goes on", end.businessKey(), nextKey);
                } else if (next != null && FanOutLanes.beforeSlot(next) && end.tries() < LANE_TRIES) {
                    again.add(new LaneEnd(end.workflow(), end.businessKey(), end.failed(), end.tries() + 1));
                }
                if (next == null || end.failed()) {
                    ChildCall.parentOf(end.businessKey()).ifPresent(p -> hintParent(p.get(0)));
                }
            } catch (RuntimeException e) {
                log.warn("fan-out element {}: letting the next of its lane go on failed ({}); the scan tries again",
                        end.businessKey(), e.toString());
            }
        }
        for (LaneEnd e : again) {
            hints.incrementAndGet();
            laneEnds.add(e);
        }
        return released;
    }

    private void hintParent(String parentId) {
        try {
            hinted.add(TaskId.of(parentId));
            hints.incrementAndGet();
        } catch (IllegalArgumentException notAChildKey) {
            // a business key that only looks like a unit's
        }
    }

    /** Reads up to {@link #MAX_PER_PASS} parents of {@code workflow} that await, from where the last scan stopped. */
    private int scan(String workflow, boolean fanOuts) {
        TaskQuery query = TaskQuery.all().withStatus(TaskStatus.AWAITING_COMPLETION).withWorkflow(workflow).withLimit(PAGE);
        TaskInfo after = resumeAfter.remove(workflow);
        List<TaskInfo> page = client.list(after == null ? query : query.after(after));
        int delivered = 0;
        int read = 0;
        while (!page.isEmpty()) {
            for (TaskInfo parent : page) {
                delivered += deliver(parent, fanOuts) ? 1 : 0;
            }
            read += page.size();
            if (page.size() < PAGE) {
                break; // the end: the next scan starts over
            }
            TaskInfo last = page.get(page.size() - 1);
            if (read >= MAX_PER_PASS) {
                resumeAfter.put(workflow, last);
                break;
            }
            page = client.list(query.after(last));
        }
        return delivered;
    }

    /** Delivers the end of {@code parent}'s child, if its current step awaits one that has ended. */
    private boolean deliver(TaskInfo parent, boolean fanOuts) {
        StepDefinition<?> step = childStep(parent).orElse(null);
        if (step == null || !fanOuts && step.group() != null && step.group().computed()
                && step.group().startedAny(client, parent.taskId(), step.name())) {
            return false; // a fan-out with elements: its hints, or the scan of fan-outs, look at it
        }
        try {
            if (step.group() != null) {
                return deliverGroup(parent, step);
            }
            if (step.slot() != null) { // a fan-out element waiting for its turn (the scan's way)
                return FanOutLanes.turnCame(client, parent, step.slot()) && FanOutLanes.release(client, parent);
            }
            Workflow<?> childWorkflow = step.childWorkflow().orElseThrow();
            TaskInfo child = client.find(childWorkflow.name(), ChildCall.childKey(parent.taskId(), step.name()))
                    .orElse(null);
            if (child == null || !child.status().isTerminal()) {
                return false;
            }
            CompletionOutcome outcome = client.stepCompletion().childEnded(parent, child);
            TaskLog.run(parent.taskId(), parent.workflow(), parent.currentStep(), 0, () -> log.info(
                    "task {} step {}: child task {} ended {}; delivered: {}", parent.taskId(), step.name(),
                    child.taskId(), child.status(), outcome));
            return outcome.accepted();
        } catch (RuntimeException e) {
            // one parent's failure never stops the others; the next pass tries it again
            log.warn("task {} step {}: delivering its child's end failed ({}); trying again on the next pass",
                    parent.taskId(), step.name(), e.toString());
            return false;
        }
    }

    /** Completes (or fails) {@code parent}'s parallel step once its units have ended; cancels the rest after a failure. */
    private boolean deliverGroup(TaskInfo parent, StepDefinition<?> step) {
        ChildGroup.Progress progress = step.group().check(parent, step.name(), client);
        CompletionOutcome outcome;
        if (progress instanceof ChildGroup.Joined joined) {
            outcome = client.stepCompletion().unitsEnded(parent, joined.output(), null);
        } else if (progress instanceof ChildGroup.Failed failed) {
            outcome = client.stepCompletion().unitsEnded(parent, null, failed.error());
        } else {
            return false;
        }
        TaskLog.run(parent.taskId(), parent.workflow(), parent.currentStep(), 0, () -> log.info(
                "task {} step {}: units ended ({}); delivered: {}", parent.taskId(), step.name(),
                progress instanceof ChildGroup.Joined ? "joined" : "failed", outcome));
        return outcome.accepted();
    }

    /** The step {@code parent} is at, if it starts a child task and this runtime knows its workflow. */
    private Optional<StepDefinition<?>> childStep(TaskInfo parent) {
        for (Workflow<?> w : workflows) {
            if (w.name().equals(parent.workflow()) && w.version() == parent.workflowVersion()) {
                if (parent.currentStep() < 0 || parent.currentStep() >= w.steps().size()) {
                    return Optional.empty();
                }
                StepDefinition<?> s = w.steps().get(parent.currentStep());
                return s.startsChildTask() ? Optional.of(s) : Optional.empty();
            }
        }
        return Optional.empty();
    }

    /** The child task ids {@code info}'s child steps started so far (for status pages), in step order. */
    static List<TaskId> children(SasClient client, Workflow<?> workflow, TaskInfo info) {
        List<TaskId> ids = new ArrayList<>();
        for (StepDefinition<?> s : workflow.steps()) {
            s.childWorkflow().flatMap(c -> client.find(c.name(), ChildCall.childKey(info.taskId(), s.name())))
                    .ifPresent(c -> ids.add(c.taskId()));
        }
        return ids;
    }
}
