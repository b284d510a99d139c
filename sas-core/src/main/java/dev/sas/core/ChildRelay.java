package dev.sas.core;

import dev.sas.core.internal.ChildWatch;
import dev.sas.core.internal.TaskLog;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Completes child task steps ({@link StepBuilder#childTask}) whose child has ended, through
 * {@link StepCompletionClient}, fenced by the parent's step and lease. Two ways find them: a child
 * that ended on this node names its parent ({@link #ended}), which is delivered at once, on the
 * {@link RelayLoop} of a started runtime (or by {@code Drain} on the test's thread), and on the
 * next pass otherwise; and a scan, on the first pass and every {@value #SCAN_EVERY} passes after,
 * reads the tasks of this runtime's workflows that await a child (through the store's state index,
 * {@value #MAX_PER_PASS} at most per workflow and scan, going on where the last scan stopped), finds
 * each one's child by its derived business key and delivers those that ended. The scan finds what
 * the first way cannot: a child that ended on a node without the parent's workflow, or on a node
 * that died before it relayed the end. A parent (or a fan-out lane's next element) found not yet
 * resting when its hint is looked at is remembered for a few passes, and its rest on this node
 * ({@link #rested}) is relayed too. What is kept in memory is only a hint, so a node that dies loses
 * nothing; a delivery repeated answers {@link CompletionOutcome#ALREADY_COMPLETED} or
 * {@link CompletionOutcome#STALE} and changes nothing. Thread-safe: {@link #ended} and
 * {@link #rested} from any thread, {@link #deliverHinted} from the relay's thread and
 * {@link #deliverEnded} from the supervisor's, at once.
 */
final class ChildRelay implements ChildWatch {
    private static final Logger log = LoggerFactory.getLogger(ChildRelay.class);

    /** Most awaiting parents read per workflow and scan; the next scan goes on from there. */
    static final int MAX_PER_PASS = 2_000;
    /** A scan runs on the first pass and then on every this many passes. */
    static final int SCAN_EVERY = 10;
    /** Most hints (parents, lane ends, rests) kept for the relay; past it the passes' scans find them. */
    private static final int MAX_HINTS = 10_000;
    private static final int PAGE = 500;

    private final SasClient client;
    private final List<Workflow<?>> workflows;
    private final Set<String> parents = new LinkedHashSet<>();
    private final Queue<TaskId> hinted = new ConcurrentLinkedQueue<>();
    /** Per fan-out unit workflow, its concurrency K: an element that ended here lets the next of its lane go on. */
    private final Map<String, FanOutLanes.Slot> lanes = new HashMap<>();
    private final Queue<LaneEnd> laneEnds = new ConcurrentLinkedQueue<>();
    /** Lane ends whose next element had not come to its slot step yet: tried again on the next pass. */
    private final Queue<LaneEnd> laneRetries = new ConcurrentLinkedQueue<>();
    /** Parents that came to rest here in a fan-out step: looked at once (an empty list has no unit to hint). */
    private final Queue<TaskId> restedHere = new ConcurrentLinkedQueue<>();
    /** Tasks a hint found not yet resting, with the pass that registered them; their rest here is relayed. */
    private final Map<TaskId, Integer> awaitedRests = new ConcurrentHashMap<>();
    private final AtomicInteger hints = new AtomicInteger();
    /** Per parent workflow, the last parent the previous scan read, when it stopped before the end. */
    private final Map<String, TaskInfo> resumeAfter = new HashMap<>();
    private volatile int passes;
    private volatile RelayLoop loop;

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

    /** A fan-out element that ended on this node: its unit's workflow and key, its terminal event, passes tried. */
    private record LaneEnd(String workflow, String businessKey, TaskEvent.Type type, int tries) {
        boolean failed() {
            return type != TaskEvent.Type.PROCESSED;
        }
    }

    /** Scans that pass over fan-outs before one looks at them too. */
    static final int LANE_SCAN_EVERY = 10;
    /** Passes a lane's next element is looked for while it has not yet come to wait for its turn. */
    private static final int LANE_TRIES = 100;

    /**
     * Relays hints at once on a {@code sas-relay} thread from now on ({@code afterDelivery} runs after
     * a delivery that completed a step); until then, and after {@link #stopLoop}, the passes do.
     */
    void startLoop(Runnable afterDelivery, String instanceId) {
        RelayLoop l = new RelayLoop(this::deliverHinted, afterDelivery, instanceId);
        l.start();
        loop = l;
    }

    /**
     * Stops the relay's thread (at shutdown), waiting up to 5 s for a run in progress; what is queued
     * is left to the passes and other nodes' scans.
     *
     * @return whether the wait was interrupted
     */
    boolean stopLoop() {
        RelayLoop l = loop;
        loop = null;
        try {
            if (l != null) {
                l.stop(5_000);
            }
            return false;
        } catch (InterruptedException e) {
            return true;
        }
    }

    private void wakeLoop() {
        RelayLoop l = loop;
        if (l != null) {
            l.wake();
        }
    }

    /** Counts a hint queued; false (and nothing counted) past {@link #MAX_HINTS}, where the scans find it. */
    private boolean room() {
        if (hints.incrementAndGet() <= MAX_HINTS) {
            return true;
        }
        hints.decrementAndGet();
        return false;
    }

    /** Whether any of the workflows has a child task step (else the runtime needs no relay). */
    boolean needed() {
        return !parents.isEmpty();
    }

    /** An event published on this node: a terminal one ({@link #ended}) or a rest ({@link #rested}). */
    void published(TaskEvent event) {
        if (event.type() == TaskEvent.Type.COMPLETION_AWAITED) {
            rested(event);
        } else {
            ended(event);
        }
    }

    /**
     * A task reached a terminal state on this node ({@code event} is its terminal event): if it is a
     * child task, its parent is delivered (and, if it is a fan-out element, the next of its lane goes
     * on) at once on the relay's thread. Quick; called on the publishing thread.
     */
    void ended(TaskEvent event) {
        if (lanes.containsKey(event.workflow()) && FanOutLanes.index(event.businessKey()) >= 0) {
            if (room()) {
                laneEnds.add(new LaneEnd(event.workflow(), event.businessKey(), event.type(), 0));
                wakeLoop();
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
            if (room()) {
                hinted.add(id);
                wakeLoop();
            }
        });
    }

    /**
     * A task came to rest awaiting a reply on this node ({@code event} is its
     * {@link TaskEvent.Type#COMPLETION_AWAITED}): looked at once if a hint found it not yet resting, or if
     * it is a parent resting in a fan-out step (an empty list has no unit to hint it). Quick; called
     * on the publishing thread.
     */
    void rested(TaskEvent event) {
        if (awaitedRests.remove(event.taskId()) != null) {
            if (room()) {
                hinted.add(event.taskId()); // a parent, or a lane's next element: its slot step is looked at
                wakeLoop();
            }
        } else if (parents.contains(event.workflow()) && fanOutStep(event) && room()) {
            restedHere.add(event.taskId());
            wakeLoop();
        }
    }

    private boolean fanOutStep(TaskEvent event) {
        for (Workflow<?> w : workflows) {
            if (w.name().equals(event.workflow()) && event.stepIndex() >= 0 && event.stepIndex() < w.steps().size()) {
                ChildGroup<?> group = w.steps().get(event.stepIndex()).group();
                return group != null && group.computed();
            }
        }
        return false;
    }

    @Override
    public int deliverEnded() {
        int pass = passes++;
        LaneEnd retry;
        while ((retry = laneRetries.poll()) != null) {
            laneEnds.add(retry); // counted still
        }
        awaitedRests.values().removeIf(registered -> registered < pass - SCAN_EVERY); // the scans look at them
        int delivered = deliverHinted();
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
     * Delivers what the hints queued on this node name: the next element of each lane whose element
     * ended, the parents of units that ended and the tasks whose rest was awaited (through {@link #deliver}).
     *
     * @return how many steps it completed or failed
     */
    int deliverHinted() {
        int delivered = nextInLanes();
        TaskId id;
        while ((id = restedHere.poll()) != null) {
            hints.decrementAndGet();
            delivered += lookAtRested(id);
        }
        Set<TaskId> distinct = new LinkedHashSet<>(); // many units of one parent ending in a run: one look
        while ((id = hinted.poll()) != null) {
            hints.decrementAndGet();
            distinct.add(id);
        }
        for (TaskId parentId : distinct) {
            try {
                TaskInfo parent = client.find(parentId).orElse(null);
                if (parent != null && parent.status() != TaskStatus.AWAITING_COMPLETION && !parent.status().isTerminal()
                        && childStep(parent).isPresent()) {
                    parent = awaitRest(parent); // its units ended before it came to rest
                }
                if (parent != null && parent.status() == TaskStatus.AWAITING_COMPLETION) {
                    delivered += deliver(parent, true) ? 1 : 0;
                }
            } catch (RuntimeException e) {
                log.warn("task {}: looking at it after its unit ended failed ({}); the scan tries again", parentId,
                        e.toString());
            }
        }
        return delivered;
    }

    /**
     * Remembers {@code task}, found not yet resting, so that its rest here is relayed; reads it again
     * (it may have come to rest meanwhile, before it was remembered).
     *
     * @return the task read again if it rests now (then it is no longer remembered), else null
     */
    private TaskInfo awaitRest(TaskInfo task) {
        if (awaitedRests.size() >= MAX_HINTS) {
            return null; // the passes try it again
        }
        awaitedRests.put(task.taskId(), passes);
        TaskInfo again = client.find(task.taskId()).orElse(null);
        if (again != null && again.status() == TaskStatus.AWAITING_COMPLETION
                && awaitedRests.remove(task.taskId()) != null) {
            return again;
        }
        return null;
    }

    /** A parent that came to rest in a fan-out step: joined at once if it started no element (an empty list). */
    private int lookAtRested(TaskId id) {
        try {
            TaskInfo task = client.find(id).orElse(null);
            if (task == null || task.status() != TaskStatus.AWAITING_COMPLETION) {
                return 0;
            }
            return deliver(task, false) ? 1 : 0;
        } catch (RuntimeException e) {
            log.warn("task {}: looking at it once it rested failed ({}); the scan tries again", id, e.toString());
            return 0;
        }
    }

    /**
     * For each fan-out element that ended here, lets the next element of its lane go on (or, if that one
     * has not come to its slot step yet, lets its rest here do so); the parent is looked at when an
     * element failed and the fan-out fails, or when every lane's last element has ended.
     */
    private int nextInLanes() {
        int released = 0;
        Map<String, LaneEnd> lastOfLanes = new HashMap<>(); // per fan-out (its units' key prefix), one lane's last
        LaneEnd end;
        while ((end = laneEnds.poll()) != null) {
            hints.decrementAndGet();
            try {
                FanOutLanes.Slot slot = lanes.get(end.workflow());
                String nextKey = FanOutLanes.shifted(end.businessKey(), slot.concurrency());
                TaskInfo next = client.find(end.workflow(), nextKey).orElse(null);
                if (next != null && FanOutLanes.beforeSlot(next) && !(end.failed() && !slot.afterFailure())) {
                    TaskInfo resting = awaitRest(next); // its rest here lets it go on, else the next passes
                    next = resting != null ? resting : next;
                    if (resting == null && end.tries() < LANE_TRIES && room()) {
                        laneRetries.add(new LaneEnd(end.workflow(), end.businessKey(), end.type(), end.tries() + 1));
                    }
                }
                if (end.failed() && !slot.afterFailure()) {
                    next = null; // the fan-out fails: its parent cancels the elements still waiting
                } else if (next != null && FanOutLanes.release(client, next)) {
                    released++;
                    log.debug("fan-out element {} ended; {} goes on", end.businessKey(), nextKey);
                }
                // a failure cancels the fan-out's other elements: its parent is looked at; else only once
                // every lane's last element has ended (a cancelled element's lane has none after it)
                boolean cancels = end.failed() && !slot.afterFailure() && end.type() != TaskEvent.Type.CANCELLED;
                if (cancels) {
                    ChildCall.parentOf(end.businessKey()).ifPresent(p -> hintParent(p.get(0)));
                } else if (next == null) {
                    // any lane's last element's neighbours hold every other lane's last: one look per fan-out and run
                    lastOfLanes.put(end.businessKey().substring(0, end.businessKey().lastIndexOf('#')), end);
                }
            } catch (RuntimeException e) {
                log.warn("fan-out element {}: letting the next of its lane go on failed ({}); the scan tries again",
                        end.businessKey(), e.toString());
            }
        }
        for (LaneEnd last : lastOfLanes.values()) {
            try {
                int k = lanes.get(last.workflow()).concurrency();
                if (FanOutLanes.lastOfLanesEnded(client, last.workflow(), last.businessKey(), k)) {
                    ChildCall.parentOf(last.businessKey()).ifPresent(p -> hintParent(p.get(0)));
                }
            } catch (RuntimeException e) {
                log.warn("fan-out element {}: looking at its parent failed ({}); the scan tries again",
                        last.businessKey(), e.toString());
            }
        }
        return released;
    }

    private void hintParent(String parentId) {
        try {
            TaskId id = TaskId.of(parentId);
            hints.incrementAndGet();
            hinted.add(id);
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
}
