package dev.sas.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sas.core.Codec;
import dev.sas.core.SasClient;
import dev.sas.core.SasRuntime;
import dev.sas.core.TaskStatus;
import dev.sas.core.Workflow;
import dev.sas.core.spi.StateStore;
import dev.sas.jdbc.JdbcStateStore;
import dev.sas.micrometer.SasMicrometer;
import dev.sas.spring.boot.internal.Boot3HealthIndicator;
import dev.sas.spring.boot.internal.HealthCheck;
import dev.sas.testing.InMemoryStateStore;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.Test;
import org.springframework.boot.actuate.health.HealthIndicator;
import org.springframework.boot.actuate.health.Status;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.jdbc.DataSourceAutoConfiguration;
import org.springframework.boot.autoconfigure.jdbc.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/** What the auto-configuration builds, and what it leaves alone, in small application contexts. */
class SasAutoConfigurationTest {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
                    DataSourceTransactionManagerAutoConfiguration.class, SasAutoConfiguration.class,
                    SasHealthAutoConfiguration.class, SasMetricsAutoConfiguration.class,
                    SasTracingAutoConfiguration.class))
            .withPropertyValues("spring.datasource.url=jdbc:h2:mem:sb" + ThreadLocalRandom.current().nextInt(1 << 30)
                    + ";DB_CLOSE_DELAY=-1", "sas.table-prefix=sbt_");

    @Configuration(proxyBeanMethods = false)
    static class Workflows {
        @Bean
        Workflow<String> greet() {
            return Workflow.builder("greet", Codec.string())
                    .step("hello", s -> s.execute(ctx -> "hello " + ctx.input()))
                    .build();
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class Schedules {
        @Bean
        dev.sas.core.Schedule nightlyGreeting(Workflow<String> greet) {
            return dev.sas.core.Schedule.named("nightly-greeting")
                    .cron("0 2 * * *", java.time.ZoneId.of("Europe/Berlin")).submits(greet, "night").build();
        }
    }

    @Test
    void schedule_beans_are_registered_at_start_and_a_second_node_registers_them_again_without_a_change() {
        runner.withUserConfiguration(Workflows.class, Schedules.class).run(ctx -> {
            assertThat(ctx).hasNotFailed();
            SasClient client = ctx.getBean(SasClient.class);
            var registered = client.schedules().find("nightly-greeting").orElseThrow();
            assertThat(registered.trigger()).isEqualTo("cron:0 2 * * *");
            assertThat(registered.workflow()).isEqualTo("greet");
            ctx.getBean(dev.sas.spring.boot.internal.ScheduleRegistration.class).afterSingletonsInstantiated();
            assertThat(client.schedules().list()).singleElement()
                    .satisfies(s -> assertThat(s.updatedAt()).isEqualTo(registered.updatedAt()));
        });
    }

    @Test
    void a_context_with_a_data_source_and_a_workflow_gets_a_started_runtime_that_runs_it() {
        runner.withUserConfiguration(Workflows.class)
                .withPropertyValues("sas.scheduler.poll-interval=200ms", "sas.scheduler.threads=2",
                        "sas.instance-id=node-a", "sas.supervisor.interval=300ms")
                .run(ctx -> {
                    assertThat(ctx).hasNotFailed().hasSingleBean(JdbcStateStore.class).hasSingleBean(SasRuntime.class);
                    SasRuntime runtime = ctx.getBean(SasRuntime.class);
                    assertThat(runtime.status().running()).as("started with the context").isTrue();
                    assertThat(runtime.instanceId()).isEqualTo("node-a");
                    assertThat(runtime.config().pollInterval()).isEqualTo(Duration.ofMillis(200));
                    assertThat(runtime.config().schedulerThreads()).isEqualTo(2);
                    assertThat(runtime.config().workflows()).extracting(Workflow::name).containsExactly("greet");
                    assertThat(ctx.getBean(StateStore.class).toString()).contains("sbt_");
                    SasClient client = ctx.getBean(SasClient.class);
                    assertThat(client).isSameAs(runtime.client());

                    @SuppressWarnings("unchecked")
                    Workflow<String> greet = ctx.getBean("greet", Workflow.class);
                    var result = client.submit(greet, "g-1", "spring").await(Duration.ofSeconds(30));
                    assertThat(result.status()).isEqualTo(TaskStatus.PROCESSED);
                    assertThat(result.output("hello", Codec.string())).contains("hello spring");
                });
    }

    @Test
    void a_submit_in_a_rolled_back_transaction_leaves_a_task_only_when_joining_is_turned_off() {
        for (boolean join : new boolean[] {true, false}) {
            runner.withUserConfiguration(Workflows.class)
                    .withPropertyValues("sas.submit.join-transaction=" + join)
                    .run(ctx -> {
                        @SuppressWarnings("unchecked")
                        Workflow<String> greet = ctx.getBean("greet", Workflow.class);
                        SasClient client = ctx.getBean(SasClient.class);
                        TransactionTemplate tx = new TransactionTemplate(ctx.getBean(PlatformTransactionManager.class));
                        tx.executeWithoutResult(status -> {
                            client.submit(greet, "rolled-back", "x");
                            status.setRollbackOnly();
                        });
                        assertThat(client.find("greet", "rolled-back").isPresent()).as("join-transaction=" + join)
                                .isEqualTo(!join);
                    });
        }
    }

    @Test
    void closing_the_context_closes_the_runtime() {
        SasRuntime[] seen = new SasRuntime[1];
        runner.withUserConfiguration(Workflows.class).run(ctx -> seen[0] = ctx.getBean(SasRuntime.class));
        assertThat(seen[0].status().running()).isFalse();
    }

    @Test
    void without_workflows_there_is_a_client_but_no_runtime() {
        runner.run(ctx -> {
            assertThat(ctx).hasNotFailed().hasSingleBean(SasClient.class).doesNotHaveBean(SasRuntime.class)
                    .doesNotHaveBean("sasHealthIndicator");
        });
    }

    @Test
    void sas_enabled_false_configures_nothing() {
        runner.withUserConfiguration(Workflows.class).withPropertyValues("sas.enabled=false").run(ctx ->
                assertThat(ctx).hasNotFailed().doesNotHaveBean(SasRuntime.class).doesNotHaveBean(SasClient.class)
                        .doesNotHaveBean(StateStore.class));
    }

    @Test
    void without_a_data_source_or_a_store_the_start_fails_and_says_what_to_add() {
        new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(SasAutoConfiguration.class))
                .withUserConfiguration(Workflows.class)
                .run(ctx -> assertThat(ctx).getFailure().isInstanceOf(SasStartupException.class)
                        .hasMessageContaining("found no DataSource bean and no StateStore bean")
                        .hasMessageContaining("spring.datasource.url").hasMessageContaining("sas.enabled=false"));
    }

    @Test
    void without_a_data_source_and_without_boot_jdbc_the_failure_names_the_jdbc_starter() {
        new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(SasAutoConfiguration.class))
                .withClassLoader(new FilteredClassLoader(DataSourceAutoConfiguration.class))
                .run(ctx -> assertThat(ctx).getFailure().isInstanceOf(SasStartupException.class)
                        .hasMessageContaining("Add spring-boot-starter-jdbc"));
    }

    @Test
    void two_data_sources_and_none_primary_fail_the_start_naming_both() {
        new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(SasAutoConfiguration.class))
                .withBean("orders", javax.sql.DataSource.class, () -> new org.h2.jdbcx.JdbcDataSource())
                .withBean("audit", javax.sql.DataSource.class, () -> new org.h2.jdbcx.JdbcDataSource())
                .run(ctx -> assertThat(ctx).getFailure().isInstanceOf(SasStartupException.class)
                        .hasMessageContaining("2 DataSource beans [orders, audit]").hasMessageContaining("@Primary"));
    }

    @Test
    void without_a_data_source_the_applications_own_store_is_enough() {
        InMemoryStateStore own = new InMemoryStateStore();
        new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(SasAutoConfiguration.class))
                .withUserConfiguration(Workflows.class).withBean(StateStore.class, () -> own)
                .run(ctx -> {
                    assertThat(ctx).hasNotFailed().hasSingleBean(SasRuntime.class).hasSingleBean(SasClient.class);
                    assertThat(ctx.getBean(SasRuntime.class).config().stateStore()).isSameAs(own);
                });
    }

    @Test
    void the_failure_analyzer_prints_the_description_and_the_action() {
        var analysis = new dev.sas.spring.boot.internal.StartupFailureAnalyzer()
                .analyze(new IllegalStateException(new SasStartupException("what is wrong.", "what to do.")));
        assertThat(analysis.getDescription()).isEqualTo("what is wrong.");
        assertThat(analysis.getAction()).isEqualTo("what to do.");
    }

    @Test
    void the_applications_own_store_is_used() {
        InMemoryStateStore own = new InMemoryStateStore();
        runner.withUserConfiguration(Workflows.class).withBean(StateStore.class, () -> own).run(ctx -> {
            assertThat(ctx).hasNotFailed().doesNotHaveBean(JdbcStateStore.class);
            assertThat(ctx.getBean(SasRuntime.class).config().stateStore()).isSameAs(own);
        });
    }

    @Test
    void customizers_change_the_runtime_builder() {
        runner.withUserConfiguration(Workflows.class)
                .withBean(SasRuntimeCustomizer.class, () -> b -> b.eventQueueCapacity(7))
                .run(ctx -> assertThat(ctx.getBean(SasRuntime.class).config().eventQueueCapacity()).isEqualTo(7));
    }

    @Test
    void the_health_indicator_reports_the_runtime_and_its_supervisor_lease() {
        runner.withUserConfiguration(Workflows.class).withPropertyValues("sas.supervisor.interval=100ms",
                "sas.scheduler.poll-interval=100ms").run(ctx -> {
                    HealthIndicator health = ctx.getBean("sasHealthIndicator", HealthIndicator.class);
                    await().atMost(Duration.ofSeconds(30)).until(() ->
                            Boolean.TRUE.equals(health.health().getDetails().get("supervisorLeader"))
                                    && health.health().getDetails().containsKey("lastClaim"));
                    assertThat(health.health().getStatus()).isEqualTo(Status.UP);
                    assertThat(health.health().getDetails()).containsKeys("instanceId", "clockSkewMillis", "inFlight",
                            "lastClaimAgeMillis");
                });
    }

    @Test
    void a_runtime_that_is_not_running_is_down() {
        Workflow<String> wf = new Workflows().greet();
        try (SasRuntime runtime = SasRuntime.builder().stateStore(new InMemoryStateStore()).workflow(wf).build()) {
            var health = new Boot3HealthIndicator(new HealthCheck(runtime, Duration.ofMinutes(1))).health();
            assertThat(health.getStatus()).isEqualTo(Status.DOWN);
            assertThat(health.getDetails().get("reason")).isEqualTo("the runtime is not running");
        }
    }

    @Test
    void the_health_is_down_while_claims_fail_for_longer_than_the_max_claim_age_and_up_again_after() {
        java.util.concurrent.atomic.AtomicBoolean databaseDown = new java.util.concurrent.atomic.AtomicBoolean();
        java.util.concurrent.atomic.AtomicInteger refused = new java.util.concurrent.atomic.AtomicInteger();
        InMemoryStateStore memory = new InMemoryStateStore();
        StateStore store = (StateStore) java.lang.reflect.Proxy.newProxyInstance(getClass().getClassLoader(),
                new Class<?>[] {StateStore.class}, (proxy, method, args) -> {
                    if (method.getName().equals("claim") && databaseDown.get()) {
                        refused.incrementAndGet();
                        throw new dev.sas.core.StateStoreException("database unreachable");
                    }
                    try {
                        return method.invoke(memory, args);
                    } catch (java.lang.reflect.InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
        dev.sas.testing.ManualClock clock = new dev.sas.testing.ManualClock();
        try (SasRuntime runtime = SasRuntime.builder().stateStore(store).clock(clock).workflow(new Workflows().greet())
                .pollInterval(Duration.ofMillis(20)).build().start()) {
            Boot3HealthIndicator health = new Boot3HealthIndicator(new HealthCheck(runtime, Duration.ofMinutes(1)));
            await().atMost(Duration.ofSeconds(30)).until(() -> runtime.status().lastClaimPoll() != null);
            assertThat(health.health().getStatus()).isEqualTo(Status.UP);

            databaseDown.set(true);
            // the claim thread's query in flight when the database went down succeeds and records its time;
            // the clock moves on only after a refused one (claims run one after the other on that thread), or
            // that success would be recorded at the later time and the health would stay UP (a busy CI run)
            await().atMost(Duration.ofSeconds(30)).until(() -> refused.get() > 0);
            clock.tick(Duration.ofMinutes(2));
            await().atMost(Duration.ofSeconds(30)).until(() -> health.health().getStatus().equals(Status.DOWN));
            assertThat(String.valueOf(health.health().getDetails().get("reason")))
                    .contains("no successful claim query").contains("sas.health.max-claim-age");

            databaseDown.set(false);
            await().atMost(Duration.ofSeconds(30)).until(() -> health.health().getStatus().equals(Status.UP));
        }
    }

    @Test
    void without_actuator_there_is_no_health_indicator_and_the_rest_works() {
        runner.withUserConfiguration(Workflows.class).withClassLoader(new FilteredClassLoader(HealthIndicator.class))
                .run(ctx -> assertThat(ctx).hasNotFailed().hasSingleBean(SasRuntime.class)
                        .doesNotHaveBean("sasHealthIndicator"));
    }

    @Test
    void with_a_meter_registry_the_runtime_reports_its_steps() {
        runner.withUserConfiguration(Workflows.class).withBean(MeterRegistry.class, SimpleMeterRegistry::new)
                .run(ctx -> {
                    assertThat(ctx).hasSingleBean(SasMicrometer.class);
                    @SuppressWarnings("unchecked")
                    Workflow<String> greet = ctx.getBean("greet", Workflow.class);
                    ctx.getBean(SasClient.class).submit(greet, "m-1", "x").await(Duration.ofSeconds(30));
                    MeterRegistry registry = ctx.getBean(MeterRegistry.class);
                    await().atMost(Duration.ofSeconds(30)).until(() -> registry.find("sas.steps")
                            .tags("workflow", "greet", "step", "hello", "outcome", "completed").counter() != null);
                    assertThat(registry.get("sas.tasks.submitted").functionCounter().count()).isEqualTo(1);
                    assertThat(registry.get("sas.tasks").tag("state", "processed").gauge().value()).isEqualTo(1);
                });
    }

    @Test
    void without_sas_micrometer_there_are_no_meters_and_the_rest_works() {
        runner.withUserConfiguration(Workflows.class).withBean(MeterRegistry.class, SimpleMeterRegistry::new)
                .withClassLoader(new FilteredClassLoader(SasMicrometer.class))
                .run(ctx -> assertThat(ctx).hasNotFailed().hasSingleBean(SasRuntime.class)
                        .doesNotHaveBean(SasMicrometer.class));
    }

    @Test
    void with_an_open_telemetry_bean_tasks_are_traced() {
        io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter spans =
                io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter.create();
        runner.withUserConfiguration(Workflows.class)
                .withBean(io.opentelemetry.api.OpenTelemetry.class, () -> io.opentelemetry.sdk.OpenTelemetrySdk.builder()
                        .setTracerProvider(io.opentelemetry.sdk.trace.SdkTracerProvider.builder().addSpanProcessor(
                                io.opentelemetry.sdk.trace.export.SimpleSpanProcessor.create(spans)).build())
                        .build())
                .run(ctx -> {
                    assertThat(ctx).hasSingleBean(dev.sas.core.Tracing.class);
                    @SuppressWarnings("unchecked")
                    Workflow<String> greet = ctx.getBean("greet", Workflow.class);
                    ctx.getBean(SasClient.class).submit(greet, "t-1", "x").await(Duration.ofSeconds(30));
                    await().atMost(Duration.ofSeconds(30)).until(() -> spans.getFinishedSpanItems().stream()
                            .anyMatch(s -> s.getName().equals("sas.step greet hello")));
                    var submit = spans.getFinishedSpanItems().stream()
                            .filter(s -> s.getName().equals("sas.submit greet")).findFirst().orElseThrow();
                    assertThat(spans.getFinishedSpanItems()).filteredOn(s -> s.getName().equals("sas.step greet hello"))
                            .allSatisfy(s -> assertThat(s.getTraceId()).isEqualTo(submit.getTraceId()));
                });
    }

    @Test
    void without_sas_opentelemetry_there_is_no_tracing_and_the_rest_works() {
        runner.withUserConfiguration(Workflows.class)
                .withBean(io.opentelemetry.api.OpenTelemetry.class, io.opentelemetry.api.OpenTelemetry::noop)
                .withClassLoader(new FilteredClassLoader(dev.sas.opentelemetry.OpenTelemetryTracing.class))
                .run(ctx -> assertThat(ctx).hasNotFailed().hasSingleBean(SasRuntime.class)
                        .doesNotHaveBean(dev.sas.core.Tracing.class));
    }

    @Test
    void property_defaults_are_sas_defaults_and_are_described_in_the_metadata() throws Exception {
        SasProperties p = new SasProperties();
        assertThat(p.getTablePrefix()).isEqualTo(JdbcStateStore.DEFAULT_TABLE_PREFIX);
        assertThat(p.getMaxPayloadBytes()).isEqualTo(SasClient.DEFAULT_MAX_PAYLOAD_BYTES);
        assertThat(p.getAgentThreads()).isEqualTo(SasRuntime.DEFAULT_AGENT_THREADS);
        assertThat(p.getShutdownGrace()).isEqualTo(SasRuntime.DEFAULT_SHUTDOWN_GRACE);
        assertThat(p.getRetention()).isEqualTo(SasRuntime.DEFAULT_RETENTION);
        assertThat(p.getScheduler().getThreads()).isEqualTo(SasRuntime.DEFAULT_SCHEDULER_THREADS);
        assertThat(p.getScheduler().getClaimBatchSize()).isEqualTo(SasRuntime.DEFAULT_CLAIM_BATCH_SIZE);
        assertThat(p.getScheduler().getMaxInFlight()).isEqualTo(SasRuntime.DEFAULT_MAX_IN_FLIGHT);
        assertThat(p.getScheduler().getPollInterval()).isEqualTo(SasRuntime.DEFAULT_POLL_INTERVAL);
        assertThat(p.getSupervisor().getInterval()).isEqualTo(SasRuntime.DEFAULT_SUPERVISOR_INTERVAL);
        assertThat(p.getMetrics().getStoreRefresh()).isEqualTo(SasMicrometer.DEFAULT_STORE_REFRESH);

        try (InputStream in = getClass().getResourceAsStream("/META-INF/spring-configuration-metadata.json")) {
            assertThat(in).as("generated by spring-boot-configuration-processor").isNotNull();
            String json = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            assertThat(json).contains("\"sas.scheduler.poll-interval\"", "\"sas.submit.join-transaction\"",
                    "\"sas.health.max-claim-age\"", "\"sas.table-prefix\"");
        }
    }
}
