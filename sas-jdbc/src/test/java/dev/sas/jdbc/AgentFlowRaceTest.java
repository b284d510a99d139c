package dev.sas.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sas.core.Agent;
import dev.sas.core.AgentRequest;
import dev.sas.core.AgentStatus;
import dev.sas.core.CircuitBreaker;
import dev.sas.core.Codec;
import dev.sas.core.FlowControl;
import dev.sas.core.RetryPolicy;
import dev.sas.core.SasRuntime;
import dev.sas.core.TaskStatus;
import dev.sas.core.Workflow;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Three runtimes, each with its own store on one database, race over tasks that call one agent
 * with flow control; the fake service behind the agent counts what it sees. Real threads and the
 * database's clock: the limits and the breaker hold across nodes because the gates live in the
 * store.
 */
class AgentFlowRaceTest {

    private static final int NODES = 3;
    private static final RetryPolicy RETRY = RetryPolicy.builder().maxAttempts(3).fixedBackoff(Duration.ofMillis(200))
            .jitter(0).build();

    /** The remote service: answers each call after 20 ms, counting its own calls in flight. */
    static final class FakeService {
        final ScheduledExecutorService clock = Executors.newScheduledThreadPool(2);
        final AtomicInteger inFlight = new AtomicInteger();
        final AtomicInteger maxInFlight = new AtomicInteger();
        final AtomicInteger failed = new AtomicInteger();
        final List<AgentRequest<String>> answered = new CopyOnWriteArrayList<>();
        final Set<String> down = ConcurrentHashMap.newKeySet();

        CompletionStage<String> call(AgentRequest<String> request) {
            maxInFlight.accumulateAndGet(inFlight.incrementAndGet(), Math::max);
            CompletableFuture<String> reply = new CompletableFuture<>();
            clock.schedule(() -> {
                inFlight.decrementAndGet(); // the service is done before its answer reaches the caller
                if (down.contains(request.endpoint())) {
                    failed.incrementAndGet();
                    reply.completeExceptionally(new IllegalStateException("503 from " + request.endpoint()));
                } else {
                    answered.add(request);
                    reply.complete("ok");
                }
            }, 20, TimeUnit.MILLISECONDS);
            return reply;
        }
    }

    private final FakeService service = new FakeService();
    private final List<SasRuntime> runtimes = new ArrayList<>();
    private final List<JdbcStateStore> stores = new ArrayList<>();
    private TestDb db;
    private String url;
    private String prefix;

    @AfterEach
    void tearDown() {
        runtimes.forEach(SasRuntime::close);
        stores.forEach(JdbcStateStore::close);
        service.clock.shutdownNow();
        if (db != null && SchemaPool.pooled(db)) {
            SchemaPool.give(db, url, prefix);
        } else if (db != null) {
            db.drop(url, prefix);
        }
    }

    private Workflow<String> start(TestDb database, FlowControl flow) {
        db = database;
        url = database == TestDb.H2_MEMORY ? "jdbc:h2:mem:race-" + TestDb.randomLetters(8) + ";DB_CLOSE_DELAY=-1"
                : database.url();
        prefix = SchemaPool.pooled(database) ? SchemaPool.take(database, url) : TestDb.randomPrefix();
        Agent<String, String> agent = Agent.builder("payments").retryPolicy(RETRY).flowControl(flow).call(service::call);
        Workflow<String> wf = Workflow.builder("orders", Codec.string())
                .step("charge", s -> s.call(agent, ctx -> ctx.input()).completeWithin(Duration.ofSeconds(30)))
                .build();
        for (int n = 0; n < NODES; n++) {
            JdbcStateStore store = TestDb.builder(url, prefix).maxPoolSize(6).build();
            stores.add(store);
            runtimes.add(SasRuntime.builder().stateStore(store).workflow(wf).instanceId("node-" + n)
                    .schedulerThreads(4).agentThreads(4).claimBatchSize(8).maxInFlight(16)
                    .pollInterval(Duration.ofMillis(50)).build().start());
        }
        return wf;
    }

    private void submit(Workflow<String> wf, String prefix, int tasks) {
        for (int i = 0; i < tasks; i++) {
            runtimes.get(i % NODES).client().submit(wf, prefix + i, prefix + i);
        }
    }

    private long count(TaskStatus status) {
        return runtimes.get(0).client().countByStatus().get(status);
    }

    private Map<String, AgentStatus> agents() {
        Map<String, AgentStatus> out = new HashMap<>();
        runtimes.get(0).client().operations().agents().forEach(a -> out.put(a.endpoint(), a));
        return out;
    }

    // ------------------------------------------------------------------ capacity

    @Test
    void three_runtimes_on_postgres_never_have_more_than_five_calls_in_flight() {
        capacity(TestDb.POSTGRES);
    }

    @Test
    void three_runtimes_on_mariadb_never_have_more_than_five_calls_in_flight() {
        capacity(TestDb.MARIADB);
    }

    @Test
    void three_runtimes_on_h2_never_have_more_than_five_calls_in_flight() {
        capacity(TestDb.H2_MEMORY);
    }

    private void capacity(TestDb database) {
        Workflow<String> wf = start(database, FlowControl.builder().maxConcurrentCalls(5).build());
        int tasks = 150;

        submit(wf, "order-", tasks);
        await().atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofMillis(100))
                .until(() -> count(TaskStatus.PROCESSED) == tasks);
        assertThat(service.maxInFlight).as("counted by the service itself").hasValueLessThanOrEqualTo(5);
        assertThat(service.maxInFlight).as("the limit was reached, not just respected").hasValueGreaterThan(1);
        assertThat(service.answered).extracting(AgentRequest::attempt).as("waiting spent no attempt").containsOnly(1);
        assertThat(runtimes.stream().mapToLong(r -> r.metrics().heldBack()).sum()).isPositive();
        assertThat(runtimes.stream().filter(r -> r.metrics().claimed() > 0)).as("the work was shared").hasSizeGreaterThan(1);
        assertThat(agents().get("default").callsInFlight()).as("every permit given back").isZero();
    }

    // ------------------------------------------------------------------ breaker

    @Test
    void an_outage_opens_the_breaker_on_postgres_and_every_task_completes_after_it_without_spending_its_budget() {
        outage(TestDb.POSTGRES);
    }

    @Test
    void an_outage_opens_the_breaker_on_mariadb_and_every_task_completes_after_it_without_spending_its_budget() {
        outage(TestDb.MARIADB);
    }

    private void outage(TestDb database) {
        CircuitBreaker breaker = CircuitBreaker.builder().consecutiveFailures(3).noFailureRate()
                .openFor(Duration.ofSeconds(1)).build();
        Workflow<String> wf = start(database, FlowControl.builder().circuitBreaker(breaker).build());
        int tasks = 60;
        service.down.add("default");

        submit(wf, "order-", tasks);

        await().atMost(Duration.ofSeconds(60)).until(() -> agents().containsKey("default")
                && agents().get("default").breaker() == CircuitBreaker.State.OPEN);
        // the service stays down through at least two failed probes
        await().atMost(Duration.ofSeconds(60)).until(() -> runtimes.stream().mapToLong(r -> r.metrics().breakersOpened())
                .sum() >= 3);
        assertThat(count(TaskStatus.ERROR) + count(TaskStatus.COMPENSATING)).as("nothing failed").isZero();
        assertThat(count(TaskStatus.WAITING)).as("tasks wait for the breaker").isPositive();
        int failedWhileDown = service.failed.get();
        service.down.clear();

        await().atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofMillis(100))
                .until(() -> count(TaskStatus.PROCESSED) == tasks);
        assertThat(count(TaskStatus.ERROR) + count(TaskStatus.COMPENSATED)).isZero();
        assertThat(agents().get("default").breaker()).isEqualTo(CircuitBreaker.State.CLOSED);
        assertThat(service.answered).extracting(AgentRequest::attempt)
                .as("a task spends at most the attempt that failed before the breaker opened").allMatch(a -> a <= 2);
        assertThat(failedWhileDown).as("the breaker stopped the calls: a few calls in flight, then one probe at a time")
                .isLessThan(tasks);
    }

    // ------------------------------------------------------------------ endpoints

    @Test
    void with_one_of_two_endpoints_down_on_postgres_calls_go_to_the_healthy_one_and_back_once_it_returns() {
        endpoints(TestDb.POSTGRES);
    }

    @Test
    void with_one_of_two_endpoints_down_on_mariadb_calls_go_to_the_healthy_one_and_back_once_it_returns() {
        endpoints(TestDb.MARIADB);
    }

    private void endpoints(TestDb database) {
        CircuitBreaker breaker = CircuitBreaker.builder().consecutiveFailures(2).noFailureRate()
                .openFor(Duration.ofSeconds(1)).build();
        Workflow<String> wf = start(database, FlowControl.builder().circuitBreaker(breaker).endpoints("eu", "us")
                .build());
        service.down.add("eu");

        submit(wf, "first-", 40);
        await().atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofMillis(100))
                .until(() -> count(TaskStatus.PROCESSED) == 40);

        assertThat(service.answered).extracting(AgentRequest::endpoint).as("every answered call went to us")
                .containsOnly("us");
        assertThat(service.answered).extracting(AgentRequest::attempt).allMatch(a -> a <= 2);
        assertThat(agents().get("eu").breaker()).isNotEqualTo(CircuitBreaker.State.CLOSED);

        service.down.clear();
        // eu is probed by the next calls once its cool-down is over, closes, and is preferred again
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200)).until(() -> {
            runtimes.get(0).client().submit(wf, "probe-" + System.nanoTime(), "probe");
            return agents().get("eu").breaker() == CircuitBreaker.State.CLOSED;
        });
        service.answered.clear();
        submit(wf, "after-", 30);
        await().atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofMillis(100))
                .until(() -> service.answered.stream().filter(r -> r.payload().startsWith("after-")).count() == 30);
        assertThat(service.answered.stream().filter(r -> r.payload().startsWith("after-")))
                .extracting(AgentRequest::endpoint).as("eu is back").containsOnly("eu");
    }
}
