package dev.sas.micrometer;

import dev.sas.core.TaskEvent;
import dev.sas.core.TaskListener;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * Turns a runtime's events into step and task meters: a step attempt's duration is the time from
 * its start event to its result event on this runtime (both on the runtime's clock). Starts whose
 * result this runtime never sees (its node took over by another, or the supervisor recovered it)
 * are forgotten after {@value #MAX_OPEN} newer ones. Thread-safe.
 */
final class StepTimings implements TaskListener {
    static final int MAX_OPEN = 10_000;

    private final MeterRegistry registry;
    private final Tags tags;
    private final Map<String, Instant> started = new LinkedHashMap<>(256, 0.75f, false) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Instant> eldest) {
            return size() > MAX_OPEN;
        }
    };

    StepTimings(MeterRegistry registry, Tags tags) {
        this.registry = registry;
        this.tags = tags;
    }

    @Override
    public void onEvent(TaskEvent e) {
        switch (e.type()) {
            case STEP_STARTED, COMPENSATION_STARTED -> start(e);
            case STEP_COMPLETED -> stepResult(e, "completed", false);
            case STEP_RETRYING -> stepResult(e, "retrying", false);
            case STEP_FAILED -> stepResult(e, "failed", false);
            case STEP_TIMED_OUT -> stepResult(e, "timed_out", false);
            case STEP_SKIPPED -> stepResult(e, "skipped", false);
            case TIMER_STARTED -> stepResult(e, "timer_started", false);
            case TIMER_FIRED -> stepResult(e, "timer_fired", false);
            case COMPENSATION_COMPLETED -> stepResult(e, "compensated", true);
            case PROCESSED, ERROR, COMPENSATED, COMPENSATION_FAILED, CANCELLED, PARKED ->
                    Counter.builder(SasMicrometer.PREFIX + ".tasks.finished")
                            .description("tasks that reached this state, by workflow (events this runtime recorded)")
                            .tags(tags).tag("workflow", String.valueOf(e.workflow()))
                            .tag("outcome", e.type().name().toLowerCase(Locale.ROOT))
                            .register(registry).increment();
            default -> {
                // RECEIVED, CANCEL_REQUESTED, RESUBMITTED, COMPENSATING, UNPARKED: no meter
            }
        }
    }

    private void start(TaskEvent e) {
        synchronized (started) {
            started.put(key(e, e.type() == TaskEvent.Type.COMPENSATION_STARTED), e.at());
        }
    }

    private void stepResult(TaskEvent e, String outcome, boolean compensation) {
        Tags t = tags.and("workflow", String.valueOf(e.workflow()), "step", step(e), "outcome", outcome);
        Counter.builder(SasMicrometer.PREFIX + ".steps")
                .description("step attempts by workflow, step and outcome (events this runtime recorded)")
                .tags(t).register(registry).increment();
        Instant from;
        synchronized (started) {
            from = started.remove(key(e, compensation));
        }
        if (from != null && !e.at().isBefore(from)) {
            Timer.builder(SasMicrometer.PREFIX + ".step.duration")
                    .description("from a step attempt's start to its result, attempts run on this runtime")
                    .tags(t).register(registry).record(Duration.between(from, e.at()));
        }
    }

    private static String step(TaskEvent e) {
        return e.stepName() != null ? e.stepName() : Integer.toString(e.stepIndex());
    }

    private static String key(TaskEvent e, boolean compensation) {
        return e.taskId().value() + '/' + e.stepIndex() + '/' + e.attempt() + (compensation ? "/c" : "");
    }
}
