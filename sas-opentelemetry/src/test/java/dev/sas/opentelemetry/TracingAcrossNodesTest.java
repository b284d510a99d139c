package dev.sas.opentelemetry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sas.core.Agent;
import dev.sas.core.Codec;
import dev.sas.core.RetryPolicy;
import dev.sas.core.SasClient;
import dev.sas.core.SasRuntime;
import dev.sas.core.TaskId;
import dev.sas.core.TaskStatus;
import dev.sas.core.Workflow;
import dev.sas.jdbc.JdbcStateStore;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.context.Scope;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Node A (a web tier: a client only) submits inside its request's span; node B (a worker runtime on
 * its own store and tracer, sharing only the database) runs the steps and the agent call. Every span
 * of the task carries the request's trace id.
 */
class TracingAcrossNodesTest {

    private static final AttributeKey<String> TASK_ID = AttributeKey.stringKey("sas.task.id");

    private final InMemorySpanExporter nodeASpans = InMemorySpanExporter.create();
    private final InMemorySpanExporter nodeBSpans = InMemorySpanExporter.create();
    private final OpenTelemetrySdk nodeA = sdk(nodeASpans);
    private final OpenTelemetrySdk nodeB = sdk(nodeBSpans);

    private static OpenTelemetrySdk sdk(InMemorySpanExporter exporter) {
        return OpenTelemetrySdk.builder().setTracerProvider(SdkTracerProvider.builder()
                .addSpanProcessor(SimpleSpanProcessor.create(exporter)).build()).build();
    }

    @AfterEach
    void closeSdks() {
        nodeA.close();
        nodeB.close();
    }

    @Test
    void one_trace_spans_the_submit_on_one_node_and_the_steps_and_agent_call_on_another() {
        String url = "jdbc:h2:mem:trace" + ThreadLocalRandom.current().nextInt(1 << 30) + ";DB_CLOSE_DELAY=-1";
        Map<String, String> seenInCode = new ConcurrentHashMap<>();
        AtomicInteger calls = new AtomicInteger();
        Agent<String, String> payments = Agent.of("payments", RetryPolicy.builder().maxAttempts(3)
                .fixedBackoff(Duration.ofMillis(10)).build(), req -> {
                    seenInCode.put("agent " + Thread.currentThread().getName().replaceAll("\\d+$", "N") + " "
                            + req.attempt(), Span.current().getSpanContext().getTraceId());
                    return calls.incrementAndGet() == 1
                            ? CompletableFuture.failedFuture(new IllegalStateException("gateway busy"))
                            : CompletableFuture.completedFuture("paid");
                });
        Workflow<String> orders = Workflow.builder("orders", Codec.string())
                .step("reserve", s -> s.execute(ctx -> {
                    seenInCode.put("reserve", Span.current().getSpanContext().getTraceId());
                    return "reserved";
                }))
                .step("charge", s -> s.call(payments, ctx -> "charge " + ctx.input()))
                .build();

        try (JdbcStateStore storeA = JdbcStateStore.builder().url(url).build();
             JdbcStateStore storeB = JdbcStateStore.builder().url(url).build();
             SasRuntime worker = worker(storeB, orders)) {
            // tag::web-tier[]
            SasClient webTier = SasClient.builder().stateStore(storeA).tracing(OpenTelemetryTracing.create(nodeA))
                    .build();

            Span request = nodeA.getTracer("shop").spanBuilder("POST /orders").setSpanKind(SpanKind.SERVER).startSpan();
            TaskId task;
            try (Scope ignored = request.makeCurrent()) {
                task = webTier.submit(orders, "order-1", "order-1").id(); // stores the request's trace context
            } finally {
                request.end();
            }
            // end::web-tier[]
            String traceId = request.getSpanContext().getTraceId();

            worker.start();
            await().atMost(Duration.ofSeconds(30)).until(() -> webTier.find(task)
                    .map(t -> t.status() == TaskStatus.PROCESSED).orElse(false));

            SpanData submit = nodeASpans.getFinishedSpanItems().stream()
                    .filter(s -> s.getName().equals("sas.submit orders")).findFirst().orElseThrow();
            assertThat(submit.getTraceId()).isEqualTo(traceId);
            assertThat(submit.getParentSpanId()).isEqualTo(request.getSpanContext().getSpanId());
            assertThat(submit.getKind()).isEqualTo(SpanKind.PRODUCER);

            await().atMost(Duration.ofSeconds(30)).until(() -> nodeBSpans.getFinishedSpanItems().size() >= 3);
            List<SpanData> steps = nodeBSpans.getFinishedSpanItems();
            assertThat(steps).extracting(SpanData::getName)
                    .containsExactlyInAnyOrder("sas.step orders reserve", "sas.step orders charge",
                            "sas.step orders charge");
            assertThat(steps).allSatisfy(s -> {
                assertThat(s.getTraceId()).as("same trace as the request on node A").isEqualTo(traceId);
                assertThat(s.getParentSpanId()).as("child of the submit").isEqualTo(submit.getSpanId());
                assertThat(s.getAttributes().get(TASK_ID)).isEqualTo(task.value());
                assertThat(s.getKind()).isEqualTo(SpanKind.CONSUMER);
            });
            assertThat(steps).filteredOn(s -> s.getStatus().getStatusCode() == StatusCode.ERROR).singleElement()
                    .satisfies(s -> assertThat(s.getEvents()).anyMatch(e -> e.getName().equals("exception")));

            assertThat(seenInCode).containsEntry("reserve", traceId)
                    .containsEntry("agent sas-agent-payments-N 1", traceId)
                    .containsEntry("agent sas-agent-payments-N 2", traceId);
        }
    }

    private SasRuntime worker(JdbcStateStore store, Workflow<String> orders) {
        // tag::worker[]
        SasRuntime worker = SasRuntime.builder().stateStore(store).workflow(orders)
                .tracing(OpenTelemetryTracing.create(nodeB)) // the worker node's OpenTelemetry
                .pollInterval(Duration.ofMillis(50))
                .build();
        // end::worker[]
        return worker;
    }

    @Test
    void without_a_current_span_the_submit_starts_the_tasks_trace() {
        OpenTelemetryTracing tracing = OpenTelemetryTracing.create(nodeA);
        String context = tracing.capture("solo", TaskId.of("t-1"));
        assertThat(context).matches("00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}");
        SpanData submit = nodeASpans.getFinishedSpanItems().get(0);
        assertThat(submit.getParentSpanContext().isValid()).as("a root span").isFalse();
        assertThat(context).contains(submit.getTraceId()).contains(submit.getSpanId());
    }

    @Test
    void a_disabled_sdk_stores_nothing_and_steps_run_untraced() {
        OpenTelemetryTracing tracing = OpenTelemetryTracing.create(io.opentelemetry.api.OpenTelemetry.noop());
        assertThat(tracing.capture("wf", TaskId.of("t-1"))).isNull();
    }

    @Test
    void tracestate_is_kept_when_it_fits_and_dropped_when_it_does_not() {
        String parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        assertThat(OpenTelemetryTracing.encode(Map.of("traceparent", parent, "tracestate", "vendor=x")))
                .isEqualTo(parent + "\nvendor=x");
        assertThat(OpenTelemetryTracing.encode(Map.of("traceparent", parent, "tracestate", "v=" + "x".repeat(500))))
                .isEqualTo(parent);
        assertThat(OpenTelemetryTracing.encode(Map.of())).isNull();
    }
}
