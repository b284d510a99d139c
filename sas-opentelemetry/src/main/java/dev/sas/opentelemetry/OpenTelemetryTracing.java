package dev.sas.opentelemetry;

import dev.sas.core.StepContext;
import dev.sas.core.TaskId;
import dev.sas.core.Tracing;
import dev.sas.core.spi.NewTask;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.Scope;
import io.opentelemetry.context.propagation.TextMapGetter;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.Executor;

/**
 * {@link Tracing} on the OpenTelemetry API. At submit it starts and ends a {@code sas.submit
 * <workflow>} span (kind PRODUCER) as a child of the submitting thread's current span, and stores
 * that span's W3C trace context ({@code traceparent}, and {@code tracestate} when it fits) with the
 * task. Around every step attempt, on whichever node claims it, it starts a {@code sas.step
 * <workflow> <step>} span (or {@code sas.compensate ...}; kind CONSUMER) as that span's child, makes
 * it current while the step's code and its agent's call run (so their own spans, an instrumented
 * HTTP client's for example, join the trace), and ends it with the attempt's result: an error or a
 * missed deadline is recorded on it with status ERROR. Attributes: {@code sas.task.id},
 * {@code sas.workflow}, {@code sas.step}, {@code sas.step.index}, {@code sas.attempt}. Inputs and
 * business keys are never recorded.
 *
 * <pre>{@code
 * Tracing tracing = OpenTelemetryTracing.create(openTelemetry);
 * SasRuntime runtime = SasRuntime.builder().stateStore(store).workflow(orders).tracing(tracing).build();
 * SasClient webTier = SasClient.builder().stateStore(store).tracing(tracing).build();
 * }</pre>
 *
 * <p>Thread-safe.
 */
public final class OpenTelemetryTracing implements Tracing {

    /** The instrumentation scope name of SAS's tracer. */
    public static final String INSTRUMENTATION_NAME = "dev.sas";

    private static final String TRACEPARENT = "traceparent";
    private static final String TRACESTATE = "tracestate";
    private static final W3CTraceContextPropagator W3C = W3CTraceContextPropagator.getInstance();

    private final Tracer tracer;

    private OpenTelemetryTracing(OpenTelemetry openTelemetry) {
        this.tracer = openTelemetry.getTracer(INSTRUMENTATION_NAME);
    }

    /**
     * Tracing through {@code openTelemetry} (an SDK, or {@code GlobalOpenTelemetry.get()} under the
     * Java agent).
     *
     * @throws NullPointerException if {@code openTelemetry} is null
     */
    public static OpenTelemetryTracing create(OpenTelemetry openTelemetry) {
        return new OpenTelemetryTracing(Objects.requireNonNull(openTelemetry, "openTelemetry must not be null"));
    }

    @Override
    public String capture(String workflow, TaskId taskId) {
        Context parent = Context.current();
        Span submit = tracer.spanBuilder("sas.submit " + workflow).setParent(parent).setSpanKind(SpanKind.PRODUCER)
                .setAttribute("sas.task.id", taskId.value()).setAttribute("sas.workflow", workflow).startSpan();
        try {
            Map<String, String> carrier = new LinkedHashMap<>();
            W3C.inject(parent.with(submit), carrier, Map::put);
            return encode(carrier);
        } finally {
            submit.end();
        }
    }

    @Override
    public StepTrace startStep(StepContext<?> step, String traceContext) {
        Context parent = traceContext == null ? Context.root()
                : W3C.extract(Context.root(), traceContext, GETTER);
        Span span = tracer.spanBuilder((step.compensating() ? "sas.compensate " : "sas.step ") + step.workflow()
                        + " " + step.stepName())
                .setParent(parent).setSpanKind(SpanKind.CONSUMER)
                .setAttribute("sas.task.id", step.taskId().value())
                .setAttribute("sas.workflow", step.workflow())
                .setAttribute("sas.step", step.stepName())
                .setAttribute("sas.step.index", step.stepIndex())
                .setAttribute("sas.attempt", step.attempt())
                .startSpan();
        return new Attempt(span, parent.with(span));
    }

    @Override
    public String toString() {
        return "OpenTelemetryTracing";
    }

    /** {@code traceparent}, then a line with {@code tracestate} when there is one and it fits; null without a valid parent. */
    static String encode(Map<String, String> carrier) {
        String parent = carrier.get(TRACEPARENT);
        if (parent == null || parent.isEmpty()) {
            return null;
        }
        String state = carrier.get(TRACESTATE);
        if (state == null || state.isEmpty()
                || parent.length() + 1 + state.length() > NewTask.MAX_TRACE_CONTEXT_LENGTH) {
            return parent;
        }
        return parent + '\n' + state;
    }

    /** Reads what {@link #encode} wrote. */
    private static final TextMapGetter<String> GETTER = new TextMapGetter<>() {
        @Override
        public Iterable<String> keys(String carrier) {
            return List.of(TRACEPARENT, TRACESTATE);
        }

        @Override
        public String get(String carrier, String key) {
            if (carrier == null) {
                return null;
            }
            int nl = carrier.indexOf('\n');
            if (TRACEPARENT.equals(key)) {
                return nl < 0 ? carrier : carrier.substring(0, nl);
            }
            return TRACESTATE.equals(key) && nl >= 0 ? carrier.substring(nl + 1) : null;
        }
    };

    /** One attempt's span and the context it is current in. */
    private record Attempt(Span span, Context context) implements StepTrace {
        @Override
        public void run(Runnable body) {
            try (Scope ignored = context.makeCurrent()) {
                body.run();
            }
        }

        @Override
        public Executor wrap(Executor executor) {
            return context.wrap(executor);
        }

        @Override
        public void end(Throwable error) {
            if (error != null) {
                span.recordException(error);
                span.setStatus(StatusCode.ERROR, String.valueOf(error.getMessage()));
            }
            span.end();
        }
    }
}
