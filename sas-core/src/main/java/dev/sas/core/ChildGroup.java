package dev.sas.core;

import dev.sas.core.internal.InDoubt;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import java.util.function.IntFunction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The shared mechanism of a step that runs a group of units and joins them: parallel branches
 * ({@link Workflow.Builder#parallel}) today, and what dynamic fan-out reuses. Each unit is a child
 * task of a unit workflow (built with {@link Workflow.Builder#fork} set, so it never compensates
 * on its own), started by the step with the business key {@link #unitKey} (parent id, step, unit
 * index), so every unit is durable, fenced, retried and deadline-bounded like any task, runs on any
 * node, and a step started again finds the units it started before. The step then rests
 * {@link TaskStatus#AWAITING_COMPLETION}, holding no thread and no in-flight slot; the supervisor's
 * {@link ChildRelay} calls {@link #check} and completes the step once every unit is
 * {@link TaskStatus#PROCESSED}, with the output {@link #join} makes of every unit's result. When a
 * unit ends otherwise, the others still running are cancelled (each stops after its in-flight step,
 * bounded by that step's deadline) and, once every unit has ended, the step fails for good; the task
 * then compensates, and this step's compensation ({@link #cancelAndCompensate}) runs the compensation
 * of every completed step of every unit, in reverse order of completion, before the task goes on with
 * the steps before the group. No task row or event row grows with the number of units: each unit is
 * its own task; only the join's output holds every unit's result (a fan-out over thousands of units
 * should join to something small).
 *
 * <p>For fan-out: build one with {@link #ChildGroup(Function, IntFunction, Function)}, where
 * {@code units} makes one {@link Unit} per list element (the function must give the same list every
 * time it is called for a task, as it is called again when compensating), {@code workflowOf} names
 * the unit workflow of index {@code i} without a task at hand (the one workflow of every element) and
 * {@code join} the step's output. All units are submitted at once, in one {@code submitAll} per unit
 * workflow; a fan-out ({@link ForEachBuilder}) bounds how many run by making every unit beyond the
 * first K wait for its turn ({@link FanOutLanes}), and may collect failures instead of failing.
 * Immutable and thread-safe.
 *
 * @param <I> the parent workflow's input type
 */
final class ChildGroup<I> {
    private static final Logger log = LoggerFactory.getLogger(ChildGroup.class);
    /** One unit: its name (for status and joins), the workflow it runs and its input. */
    record Unit(String name, Workflow<Object> workflow, Object input) {
        Unit {
            Objects.requireNonNull(name, "unit name must not be null");
            Objects.requireNonNull(workflow, "unit workflow must not be null");
        }
    }

    /** A step's events that leave its outcome open: started, request sent, timed out. */
    private static final Set<TaskEvent.Type> STEP_OPEN = EnumSet.of(TaskEvent.Type.STEP_STARTED,
            TaskEvent.Type.COMPLETION_AWAITED, TaskEvent.Type.STEP_TIMED_OUT);
    /** A step's events that settle its outcome. */
    private static final Set<TaskEvent.Type> STEP_ENDED = EnumSet.of(TaskEvent.Type.STEP_COMPLETED,
            TaskEvent.Type.STEP_FAILED);

    /** A unit that ended, with its task as read from the store. */
    record Ended(int index, TaskInfo task) {
    }

    /** What {@link #check} found. */
    sealed interface Progress {
    }

    /** Some unit has not ended yet (a failed unit's siblings are being cancelled meanwhile). */
    record Running(int ended, int total) implements Progress {
    }

    /** Every unit is {@code PROCESSED}: the step completes with {@code output}. */
    record Joined(String output) implements Progress {
    }

    /** A unit ended other than {@code PROCESSED} and every other unit has ended: the step fails for good. */
    record Failed(String error) implements Progress {
    }

    private final Function<StepContext<I>, List<Unit>> units;
    private final IntFunction<Workflow<?>> workflowOf;
    private final Function<List<Ended>, String> join;
    private final int fixedCount;
    private final boolean collectFailures;
    private final Workflow<?> computedUnits;

    /** A group of the same units for every task (parallel branches). */
    ChildGroup(List<Workflow<Object>> fixed, Function<List<Ended>, String> join) {
        this(ctx -> unitsOf(fixed, ctx), fixed::get, join, fixed.size(), false, null);
    }

    /**
     * A group whose units {@code units} computes from the task (fan-out), all of the workflow
     * {@code unitWorkflow}, which a runtime registers with the parent's. With {@code collectFailures},
     * a unit that fails does not fail the step or cancel the others: the join sees every unit ended,
     * whatever its state.
     */
    ChildGroup(Function<StepContext<I>, List<Unit>> units, IntFunction<Workflow<?>> workflowOf,
            Function<List<Ended>, String> join, boolean collectFailures, Workflow<?> unitWorkflow) {
        this(units, workflowOf, join, -1, collectFailures, Objects.requireNonNull(unitWorkflow, "unitWorkflow"));
    }

    private ChildGroup(Function<StepContext<I>, List<Unit>> units, IntFunction<Workflow<?>> workflowOf,
            Function<List<Ended>, String> join, int fixedCount, boolean collectFailures, Workflow<?> computedUnits) {
        this.units = Objects.requireNonNull(units, "units must not be null");
        this.workflowOf = Objects.requireNonNull(workflowOf, "workflowOf must not be null");
        this.join = Objects.requireNonNull(join, "join must not be null");
        this.fixedCount = fixedCount;
        this.collectFailures = collectFailures;
        this.computedUnits = computedUnits;
    }

    private static <I> List<Unit> unitsOf(List<Workflow<Object>> fixed, StepContext<I> ctx) {
        List<Unit> list = new ArrayList<>();
        for (Workflow<Object> w : fixed) {
            list.add(new Unit(w.name(), w, ctx.input()));
        }
        return list;
    }

    /** The business key of unit {@code index} of step {@code step} of task {@code parent}. */
    static String unitKey(TaskId parent, String step, int index) {
        return ChildCall.childKey(parent, step) + "#" + index;
    }

    /** The unit workflows of {@code workflow}'s groups of fixed units, which a runtime registers with it. */
    static List<Workflow<?>> unitWorkflows(Workflow<?> workflow) {
        List<Workflow<?>> list = new ArrayList<>();
        for (StepDefinition<?> s : workflow.steps()) {
            if (s.group() != null) {
                list.addAll(s.group().fixedWorkflows());
            }
        }
        return list;
    }

    /** Whether the units are computed from the task (a fan-out) rather than fixed (parallel branches). */
    boolean computed() {
        return fixedCount < 0;
    }

    /** Whether step {@code step} of {@code parent} started any unit (one read: the first unit). */
    boolean startedAny(SasClient client, TaskId parent, String step) {
        return client.find(workflowOf.apply(0).name(), unitKey(parent, step, 0)).isPresent();
    }

    /** The unit workflows of a group of fixed units, or the one of a computed group. */
    List<Workflow<?>> fixedWorkflows() {
        List<Workflow<?>> list = new ArrayList<>();
        if (computedUnits != null) {
            list.add(computedUnits);
        }
        for (int i = 0; i < fixedCount; i++) {
            list.add(workflowOf.apply(i));
        }
        return list;
    }

    /**
     * Starts every unit, or finds the ones started before (a unit that ended {@code ERROR} is
     * resubmitted, so resubmitting the parent runs its failed units again). Called on the step's
     * scheduler thread.
     *
     * @return the first unit's id
     */
    TaskId start(StepContext<I> ctx, SasClient client) {
        List<Unit> list = units.apply(ctx);
        if (list.isEmpty()) {
            if (fixedCount >= 0) {
                throw new NonRetryableException("step '" + ctx.stepName() + "' has no units to run");
            }
            return ctx.taskId(); // nothing to run: the relay's next look joins no units
        }
        // one submitAll (one transaction) per unit workflow; units started before come back as they are
        Map<Workflow<Object>, Map<String, Object>> byWorkflow = new LinkedHashMap<>();
        Map<String, Unit> byKey = new HashMap<>();
        for (int i = 0; i < list.size(); i++) {
            String key = unitKey(ctx.taskId(), ctx.stepName(), i);
            byWorkflow.computeIfAbsent(list.get(i).workflow(), w -> new LinkedHashMap<>()).put(key, list.get(i).input());
            byKey.put(key, list.get(i));
        }
        TaskId first = null;
        int created = 0;
        for (Map.Entry<Workflow<Object>, Map<String, Object>> e : byWorkflow.entrySet()) {
            List<String> keys = new ArrayList<>(e.getValue().keySet());
            List<TaskHandle> handles = client.submitAll(e.getKey(), e.getValue());
            for (int i = 0; i < handles.size(); i++) {
                TaskHandle h = handles.get(i);
                first = first == null ? h.id() : first;
                if (h.created()) {
                    created++;
                } else if (h.info().status() == TaskStatus.ERROR) {
                    log.info("task {} step {}: unit {} ({}) ended ERROR before; resubmitting it", ctx.taskId(),
                            ctx.stepName(), byKey.get(keys.get(i)).name(), h.id());
                    client.operations().resubmitUnit(h.id());
                }
            }
        }
        log.info("task {} step {}: {} unit(s) started, {} found started before", ctx.taskId(), ctx.stepName(), created,
                list.size() - created);
        return first;
    }

    /** The units of step {@code step} of {@code parent} found in the store, in unit order, with their index. */
    List<Ended> find(SasClient client, TaskId parent, String step) {
        List<Ended> found = new ArrayList<>();
        for (int i = 0; fixedCount < 0 || i < fixedCount; i++) {
            Optional<TaskInfo> unit = client.find(workflowOf.apply(i).name(), unitKey(parent, step, i));
            if (unit.isEmpty()) {
                if (fixedCount < 0) {
                    break;
                }
                continue;
            }
            found.add(new Ended(i, unit.get()));
        }
        return found;
    }

    /**
     * Where the units of {@code parent}'s current step {@code step} stand; cancels the running units
     * once one has failed. Called by the relay, on the supervisor's thread.
     */
    Progress check(TaskInfo parent, String step, SasClient client) {
        List<TaskInfo> found = find(client, parent.taskId(), step).stream().map(Ended::task).toList();
        int total = fixedCount < 0 ? found.size() : fixedCount;
        List<TaskInfo> failed = found.stream().filter(u -> u.status().isTerminal() && u.status() != TaskStatus.PROCESSED)
                .toList();
        int ended = (int) found.stream().filter(u -> u.status().isTerminal()).count();
        if (!failed.isEmpty() && !collectFailures) {
            cancelRunning(found, parent.taskId(), step, client);
            if (ended < found.size()) {
                return new Running(ended, total);
            }
            TaskInfo first = failed.stream().filter(u -> u.status() != TaskStatus.CANCELLED).findFirst()
                    .orElse(failed.get(0));
            return new Failed("unit " + ChildCall.failure(first) + (failed.size() > 1 ? "; " + (failed.size() - 1)
                    + " other unit(s) ended too (cancelled or failed)" : ""));
        }
        if (found.size() < total || ended < total) {
            return new Running(ended, total);
        }
        return new Joined(join.apply(find(client, parent.taskId(), step)));
    }

    private static void cancelRunning(List<TaskInfo> found, TaskId parent, String step, SasClient client) {
        for (TaskInfo u : found) {
            if (!u.status().isTerminal() && !u.cancelRequested()) {
                boolean requested = client.operations().cancelUnit(u.taskId());
                log.info("task {} step {}: cancel of unit task {} {}", parent, step, u.taskId(),
                        requested ? "requested" : "not needed, it ended meanwhile");
            }
        }
    }

    /**
     * This step's compensation: cancels the units still running and, once every unit has ended,
     * runs the compensation of every completed step of every unit, and of every step started and
     * never answered (an unknown outcome), latest completion (or start) first. A unit
     * still running fails the attempt (the compensation's retry policy tries again), so nothing is
     * compensated while a unit may still complete a step; so does a step of unknown outcome until its
     * deadline has passed ({@link InDoubt#until}). Called on a scheduler thread.
     *
     * @throws IllegalStateException while a unit has not ended
     * @throws Exception what a unit step's compensation threw
     */
    void cancelAndCompensate(StepContext<I> ctx, SasClient client) throws Exception {
        List<Unit> list = units.apply(ctx);
        List<Ended> ends = find(client, ctx.taskId(), ctx.stepName());
        List<TaskInfo> found = ends.stream().map(Ended::task).toList();
        cancelRunning(found, ctx.taskId(), ctx.stepName(), client);
        long running = found.stream().filter(u -> !u.status().isTerminal()).count();
        if (running > 0) {
            throw new IllegalStateException("step '" + ctx.stepName() + "': " + running + " unit(s) still running after"
                    + " their cancel; compensating once they have ended");
        }
        List<Done> done = new ArrayList<>();
        for (Ended e : ends) {
            if (e.index() >= list.size() || !list.get(e.index()).workflow().name().equals(e.task().workflow())) {
                continue; // not a unit this step's definition knows
            }
            Unit unit = list.get(e.index());
            for (TaskInfo.StepInfo s : e.task().steps()) {
                if (s.status() == StepStatus.COMPLETED) {
                    done.add(new Done(e.task(), unit, s.index(), s.finishedAt(), null));
                }
            }
            if (e.task().status() != TaskStatus.PROCESSED) {
                List<TaskEvent> events = client.events(e.task().taskId());
                unknownOutcome(events, e.task()).ifPresent(u -> done.add(new Done(e.task(), unit, u.stepIndex(), u.at(),
                        InDoubt.until(unit.workflow().steps().get(u.stepIndex()), u.stepIndex(), events))));
            }
        }
        waitForInDoubtSteps(ctx, client, done);
        done.sort(Comparator.comparing(Done::at, Comparator.nullsFirst(Comparator.<Instant>naturalOrder()))
                .thenComparing(Done::step).reversed());
        for (Done d : done) {
            StepDefinition<Object> def = d.unit().workflow().steps().get(d.step());
            Optional<Compensation<Object>> compensation = def.compensation();
            if (compensation.isPresent()) {
                log.info("task {} step {}: compensating step {} of unit {} (task {})", ctx.taskId(), ctx.stepName(),
                        def.name(), d.unit().name(), d.task().taskId());
                compensation.get().compensate(new UnitContext(d.task(), d.unit().workflow(), def, d.unit().input(), ctx));
            }
        }
    }

    /**
     * A unit's step to compensate: completed at {@code at}, or started then and never answered; then
     * {@code doubtUntil} is when its effect can no longer be applied, else null.
     */
    private record Done(TaskInfo task, Unit unit, int step, Instant at, Instant doubtUntil) {
    }

    /**
     * Refuses (the compensation's retry policy tries again) while a step of unknown outcome may still
     * be applied ({@link InDoubt#until}): compensating earlier could undo nothing and leave the late
     * effect applied.
     */
    private static void waitForInDoubtSteps(StepContext<?> ctx, SasClient client, List<Done> done) {
        Instant latest = done.stream().map(Done::doubtUntil).filter(Objects::nonNull).max(Comparator.naturalOrder())
                .orElse(null);
        if (latest != null && client.now().isBefore(latest)) {
            throw new IllegalStateException("step '" + ctx.stepName() + "': a unit step of unknown outcome may still"
                    + " be applied until " + latest + " (its deadline and " + InDoubt.GRACE.toMillis()
                    + " ms); compensating after that");
        }
    }

    /**
     * The step of an ended unit whose outcome is unknown: its call started (or an awaiting step's
     * request went out) and the unit was cancelled or timed out before a result was recorded, or it
     * failed for good ({@code STEP_FAILED}) after errors that may have left its effect applied (out
     * of retries on transient errors). Such a step is compensated, as a chain compensates its failing
     * step. The failed step's event does not tell which failure it was; the unit's row does, as for a
     * chain: a task that ends {@code ERROR} keeps the attempts whose effect may have applied, none
     * after a definite failure ({@link NonRetryableException}), so that a later cancel compensates them.
     */
    private static Optional<TaskEvent> unknownOutcome(List<TaskEvent> events, TaskInfo unit) {
        TaskEvent last = null;
        for (TaskEvent ev : events) {
            if (ev.stepIndex() >= 0 && (STEP_OPEN.contains(ev.type()) || STEP_ENDED.contains(ev.type()))) {
                last = ev;
            }
        }
        if (last == null || last.type() == TaskEvent.Type.STEP_COMPLETED
                || last.type() == TaskEvent.Type.STEP_FAILED && !failedMayHaveApplied(unit, last.stepIndex())) {
            return Optional.empty();
        }
        int index = last.stepIndex();
        boolean recorded = unit.steps().stream().anyMatch(st -> st.index() == index
                && (st.status() == StepStatus.COMPLETED || st.status() == StepStatus.COMPENSATED));
        return recorded ? Optional.empty() : Optional.of(last);
    }

    /** Whether unit {@code unit}, which failed for good at step {@code index}, kept attempts that may have applied. */
    private static boolean failedMayHaveApplied(TaskInfo unit, int index) {
        return unit.status() == TaskStatus.ERROR && unit.currentStep() == index && unit.attempt() > 0;
    }
}
