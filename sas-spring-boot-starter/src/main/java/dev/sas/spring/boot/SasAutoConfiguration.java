package dev.sas.spring.boot;

import dev.sas.core.AlertSink;
import dev.sas.core.CompletionTokenKeys;
import dev.sas.core.RuntimeBuilder;
import dev.sas.core.SasClient;
import dev.sas.core.SasRuntime;
import dev.sas.core.TaskListener;
import dev.sas.core.Tracing;
import dev.sas.core.Workflow;
import dev.sas.core.spi.StateStore;
import dev.sas.jdbc.JdbcStateStore;
import dev.sas.spring.boot.internal.SasLifecycle;
import dev.sas.spring.boot.internal.ScheduleRegistration;
import dev.sas.spring.boot.internal.SpringTransactions;
import dev.sas.spring.boot.internal.StartupCheck;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;

/**
 * Configures SAS on the application's {@link DataSource}: a {@link JdbcStateStore} (bean
 * {@code sasStateStore}), a {@link SasRuntime} registering every {@link Workflow} bean (only when
 * there is one: a node without workflows gets just the client), a {@link SasClient}, and the
 * runtime's start and stop with the context. A plain {@code client.submit(...)} inside a Spring
 * transaction on that data source joins it ({@code sas.submit.join-transaction}), and the node's
 * scheduler is woken right after the commit. Every bean backs off when the application defines
 * its own. {@link SasHealthAutoConfiguration} and {@link SasMetricsAutoConfiguration} add a health
 * indicator and meters.
 *
 * <p>Runs on Spring Boot 3 and 4: it is ordered after the {@code DataSourceAutoConfiguration} of
 * either line ({@code org.springframework.boot.autoconfigure.jdbc} on Boot 3,
 * {@code org.springframework.boot.jdbc.autoconfigure} in {@code spring-boot-jdbc} on Boot 4). Unless
 * {@code sas.enabled=false}, an application in which it cannot make a {@link SasClient} (no
 * {@link DataSource} bean and no {@link StateStore} bean, or several data sources and none
 * primary) fails at start with a {@link SasStartupException} saying what to add; it never starts
 * without SAS silently.
 */
@AutoConfiguration(afterName = {
        "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration",
        "org.springframework.boot.autoconfigure.jdbc.DataSourceAutoConfiguration"})
@ConditionalOnClass({SasRuntime.class, JdbcStateStore.class})
@ConditionalOnProperty(prefix = "sas", name = "enabled", matchIfMissing = true)
@EnableConfigurationProperties(SasProperties.class)
public class SasAutoConfiguration {

    private static final Logger log = LoggerFactory.getLogger(SasAutoConfiguration.class);

    /** Creates the auto-configuration; Spring calls it. */
    public SasAutoConfiguration() {
    }

    /**
     * Fails the start, with what to do, when no client could be configured.
     *
     * @param beans the application's beans
     * @return the check, run once every singleton exists
     */
    @Bean
    static StartupCheck sasStartupCheck(ListableBeanFactory beans) {
        return new StartupCheck(beans);
    }

    /**
     * How submissions find the caller's Spring transaction.
     *
     * @param dataSource the application's data source
     * @return the finder
     */
    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnSingleCandidate(DataSource.class)
    SpringTransactions sasSpringTransactions(DataSource dataSource) {
        return new SpringTransactions(dataSource);
    }

    /**
     * The store on the application's data source; SAS never closes the data source.
     *
     * @param dataSource the application's data source
     * @param properties the {@code sas.*} properties
     * @param transactions how a submission finds the caller's transaction
     * @return the store
     */
    @Bean
    @ConditionalOnMissingBean(StateStore.class)
    @ConditionalOnSingleCandidate(DataSource.class)
    JdbcStateStore sasStateStore(DataSource dataSource, SasProperties properties, SpringTransactions transactions) {
        JdbcStateStore.Builder b = JdbcStateStore.builder().dataSource(dataSource)
                .tablePrefix(properties.getTablePrefix())
                .createSchema(properties.isCreateSchema());
        if (properties.getSubmit().isJoinTransaction()) {
            b.hostTransaction(transactions);
        }
        return b.build();
    }

    /**
     * The runtime, with every {@link Workflow} bean, {@link TaskListener} bean, the
     * {@link AlertSink} and {@link Tracing} beans if there are, then every {@link SasRuntimeCustomizer}. Started and
     * stopped by {@link #sasLifecycle}.
     *
     * @param store the store
     * @param properties the {@code sas.*} properties
     * @param workflows the workflow beans
     * @param listeners the listener beans
     * @param alertSink the alert sink bean, if any
     * @param tracing the tracing bean, if any
     * @param completionTokenKeys the keys that sign completion tokens of steps awaiting completion, if a bean (required for such steps)
     * @param customizers the customizer beans
     * @param transactions woken after commits
     * @return the runtime, not started
     */
    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnBean({Workflow.class, StateStore.class})
    SasRuntime sasRuntime(StateStore store, SasProperties properties, ObjectProvider<Workflow<?>> workflows,
            ObjectProvider<TaskListener> listeners, ObjectProvider<AlertSink> alertSink,
            ObjectProvider<SasRuntimeCustomizer> customizers, ObjectProvider<SpringTransactions> transactions,
            ObjectProvider<Tracing> tracing, ObjectProvider<CompletionTokenKeys> completionTokenKeys) {
        RuntimeBuilder b = SasRuntime.builder().stateStore(store)
                .schedulerEnabled(properties.getScheduler().isEnabled())
                .schedulerThreads(properties.getScheduler().getThreads())
                .claimBatchSize(properties.getScheduler().getClaimBatchSize())
                .maxInFlight(properties.getScheduler().getMaxInFlight())
                .pollInterval(properties.getScheduler().getPollInterval())
                .supervisorEnabled(properties.getSupervisor().isEnabled())
                .supervisorInterval(properties.getSupervisor().getInterval())
                .agentThreads(properties.getAgentThreads())
                .shutdownGrace(properties.getShutdownGrace())
                .retention(properties.getRetention())
                .maxPayloadBytes(properties.getMaxPayloadBytes());
        if (properties.getInstanceId() != null) {
            b.instanceId(properties.getInstanceId());
        }
        workflows.orderedStream().forEach(b::workflow);
        listeners.orderedStream().forEach(b::onEvent);
        alertSink.ifUnique(b::alertSink);
        tracing.ifUnique(b::tracing);
        completionTokenKeys.ifUnique(b::completionTokenKeys);
        customizers.orderedStream().forEach(c -> c.customize(b));
        SasRuntime runtime = b.build();
        transactions.ifAvailable(t -> t.wake(runtime));
        log.info("SAS runtime {} configured with workflows {}", runtime.instanceId(),
                runtime.config().workflows().stream().map(w -> w.name() + " v" + w.version()).toList());
        return runtime;
    }

    /**
     * Starts the runtime with the context and closes it when the context stops.
     *
     * @param runtime the runtime
     * @return the lifecycle
     */
    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnBean(SasRuntime.class)
    SasLifecycle sasLifecycle(SasRuntime runtime) {
        return new SasLifecycle(runtime);
    }

    /**
     * Registers every {@link dev.sas.core.Schedule} bean with the store at start (idempotent: every
     * node does it); the node holding the supervisor lease fires them.
     *
     * @param client the client
     * @param schedules the schedule beans
     * @return the registration, run once every singleton exists
     */
    @Bean
    @ConditionalOnMissingBean
    ScheduleRegistration sasScheduleRegistration(ObjectProvider<SasClient> client,
            ObjectProvider<dev.sas.core.Schedule> schedules) {
        return new ScheduleRegistration(client, schedules);
    }

    /**
     * The client: the runtime's when there is one, else one on the store (a node that submits and
     * reads but runs nothing).
     *
     * @param runtime the runtime, if any
     * @param store the store
     * @param properties the {@code sas.*} properties
     * @param tracing the tracing bean, if any
     * @param completionTokenKeys the keys that check completion tokens, if a bean
     * @return the client
     */
    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnBean(StateStore.class)
    SasClient sasClient(ObjectProvider<SasRuntime> runtime, StateStore store, SasProperties properties,
            ObjectProvider<Tracing> tracing, ObjectProvider<CompletionTokenKeys> completionTokenKeys) {
        SasRuntime r = runtime.getIfUnique();
        if (r != null) {
            return r.client();
        }
        SasClient.Builder b = SasClient.builder().stateStore(store).maxPayloadBytes(properties.getMaxPayloadBytes());
        tracing.ifUnique(b::tracing);
        completionTokenKeys.ifUnique(b::completionTokenKeys);
        return b.build();
    }
}
