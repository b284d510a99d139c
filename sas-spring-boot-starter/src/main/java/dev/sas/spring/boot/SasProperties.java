package dev.sas.spring.boot;

import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The {@code sas.*} properties of the Spring Boot starter. Every default is SAS's own (the
 * constants of {@code SasRuntime}, {@code SasClient} and {@code JdbcStateStore}). Bound by Spring;
 * not thread-safe while binding, read-only after.
 */
@ConfigurationProperties(prefix = "sas")
public class SasProperties {

    /** Whether the starter configures SAS at all. */
    private boolean enabled = true;
    /** This node's instance id, stamped on the tasks it claims; generated from the host name when unset. */
    private String instanceId;
    /** Prefix of SAS's tables. */
    private String tablePrefix = "sas_";
    /** Whether SAS creates and upgrades its tables at start; turn off when Flyway or Liquibase applies its scripts. */
    private boolean createSchema = true;
    /** Largest encoded input or step output, in UTF-8 bytes. */
    private int maxPayloadBytes = 1024 * 1024;
    /** Threads per agent for agents without their own executor. */
    private int agentThreads = 8;
    /** How long closing the runtime waits for running steps. */
    private Duration shutdownGrace = Duration.ofSeconds(10);
    /** How long finished tasks are kept before the supervisor purges them. */
    private Duration retention = Duration.ofDays(7);

    private final Submit submit = new Submit();
    private final Scheduler scheduler = new Scheduler();
    private final Supervisor supervisor = new Supervisor();
    private final Health health = new Health();
    private final Metrics metrics = new Metrics();
    private final Tracing tracing = new Tracing();

    /** @return whether the starter configures SAS */
    public boolean isEnabled() {
        return enabled;
    }

    /** @param enabled whether the starter configures SAS */
    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    /** @return the instance id, or null for a generated one */
    public String getInstanceId() {
        return instanceId;
    }

    /** @param instanceId this node's instance id */
    public void setInstanceId(String instanceId) {
        this.instanceId = instanceId;
    }

    /** @return the table prefix */
    public String getTablePrefix() {
        return tablePrefix;
    }

    /** @param tablePrefix the table prefix */
    public void setTablePrefix(String tablePrefix) {
        this.tablePrefix = tablePrefix;
    }

    /** @return whether SAS manages its schema */
    public boolean isCreateSchema() {
        return createSchema;
    }

    /** @param createSchema whether SAS manages its schema */
    public void setCreateSchema(boolean createSchema) {
        this.createSchema = createSchema;
    }

    /** @return the largest payload in bytes */
    public int getMaxPayloadBytes() {
        return maxPayloadBytes;
    }

    /** @param maxPayloadBytes the largest payload in bytes */
    public void setMaxPayloadBytes(int maxPayloadBytes) {
        this.maxPayloadBytes = maxPayloadBytes;
    }

    /** @return threads per agent */
    public int getAgentThreads() {
        return agentThreads;
    }

    /** @param agentThreads threads per agent */
    public void setAgentThreads(int agentThreads) {
        this.agentThreads = agentThreads;
    }

    /** @return the shutdown grace period */
    public Duration getShutdownGrace() {
        return shutdownGrace;
    }

    /** @param shutdownGrace the shutdown grace period */
    public void setShutdownGrace(Duration shutdownGrace) {
        this.shutdownGrace = shutdownGrace;
    }

    /** @return how long finished tasks are kept */
    public Duration getRetention() {
        return retention;
    }

    /** @param retention how long finished tasks are kept */
    public void setRetention(Duration retention) {
        this.retention = retention;
    }

    /** @return the submit settings */
    public Submit getSubmit() {
        return submit;
    }

    /** @return the scheduler settings */
    public Scheduler getScheduler() {
        return scheduler;
    }

    /** @return the supervisor settings */
    public Supervisor getSupervisor() {
        return supervisor;
    }

    /** @return the health indicator settings */
    public Health getHealth() {
        return health;
    }

    /** @return the metrics settings */
    public Metrics getMetrics() {
        return metrics;
    }

    /** @return the tracing settings */
    public Tracing getTracing() {
        return tracing;
    }

    /** {@code sas.tracing.*}: OpenTelemetry tracing (with {@code sas-opentelemetry} and an OpenTelemetry bean). */
    public static class Tracing {
        /** Whether tasks carry the submitter's trace to their steps and agent calls. */
        private boolean enabled = true;

        /** @return whether tracing is on */
        public boolean isEnabled() {
            return enabled;
        }

        /** @param enabled whether tracing is on */
        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }
    }

    /** {@code sas.submit.*}: how submissions meet the application's transactions. */
    public static class Submit {
        /**
         * Whether a submit inside a Spring transaction on the application's DataSource joins it, so
         * a rollback leaves no task. Off: every submit commits on its own at once.
         */
        private boolean joinTransaction = true;

        /** @return whether a submit joins the caller's Spring transaction */
        public boolean isJoinTransaction() {
            return joinTransaction;
        }

        /** @param joinTransaction whether a submit joins the caller's Spring transaction */
        public void setJoinTransaction(boolean joinTransaction) {
            this.joinTransaction = joinTransaction;
        }
    }

    /** {@code sas.scheduler.*}: the scheduler role of this node. */
    public static class Scheduler {
        /** Whether this node claims and runs tasks; off for a node that only submits and reads. */
        private boolean enabled = true;
        /** Threads running steps. */
        private int threads = 4;
        /** Most tasks claimed in one statement. */
        private int claimBatchSize = 64;
        /** Most tasks this node holds at once. */
        private int maxInFlight = 256;
        /** How often an idle node looks for due tasks submitted elsewhere. */
        private Duration pollInterval = Duration.ofMillis(500);

        /** @return whether this node runs tasks */
        public boolean isEnabled() {
            return enabled;
        }

        /** @param enabled whether this node runs tasks */
        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        /** @return step threads */
        public int getThreads() {
            return threads;
        }

        /** @param threads step threads */
        public void setThreads(int threads) {
            this.threads = threads;
        }

        /** @return the claim batch size */
        public int getClaimBatchSize() {
            return claimBatchSize;
        }

        /** @param claimBatchSize the claim batch size */
        public void setClaimBatchSize(int claimBatchSize) {
            this.claimBatchSize = claimBatchSize;
        }

        /** @return the most tasks held at once */
        public int getMaxInFlight() {
            return maxInFlight;
        }

        /** @param maxInFlight the most tasks held at once */
        public void setMaxInFlight(int maxInFlight) {
            this.maxInFlight = maxInFlight;
        }

        /** @return the poll interval */
        public Duration getPollInterval() {
            return pollInterval;
        }

        /** @param pollInterval the poll interval */
        public void setPollInterval(Duration pollInterval) {
            this.pollInterval = pollInterval;
        }
    }

    /** {@code sas.supervisor.*}: the supervisor role of this node. */
    public static class Supervisor {
        /** Whether this node competes for the supervisor lease. */
        private boolean enabled = true;
        /** How often the supervisor scans for expired steps. */
        private Duration interval = Duration.ofSeconds(1);

        /** @return whether this node may supervise */
        public boolean isEnabled() {
            return enabled;
        }

        /** @param enabled whether this node may supervise */
        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        /** @return the supervisor interval */
        public Duration getInterval() {
            return interval;
        }

        /** @param interval the supervisor interval */
        public void setInterval(Duration interval) {
            this.interval = interval;
        }
    }

    /** {@code sas.health.*}: the {@code sas} health indicator (with Spring Boot Actuator). */
    public static class Health {
        /**
         * The health is DOWN when the scheduler's last successful claim query is older than this
         * while it has room for more tasks (the store is unreachable or the claim thread is stuck).
         */
        private Duration maxClaimAge = Duration.ofMinutes(1);

        /** @return the oldest acceptable last claim */
        public Duration getMaxClaimAge() {
            return maxClaimAge;
        }

        /** @param maxClaimAge the oldest acceptable last claim */
        public void setMaxClaimAge(Duration maxClaimAge) {
            this.maxClaimAge = maxClaimAge;
        }
    }

    /** {@code sas.metrics.*}: the Micrometer meters (with {@code sas-micrometer} and a MeterRegistry). */
    public static class Metrics {
        /** Whether SAS's meters are registered. */
        private boolean enabled = true;
        /** How often, at most, the store's gauges (tasks by state, oldest due task) query the database. */
        private Duration storeRefresh = Duration.ofSeconds(30);

        /** @return whether the meters are registered */
        public boolean isEnabled() {
            return enabled;
        }

        /** @param enabled whether the meters are registered */
        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        /** @return the store gauges' refresh interval */
        public Duration getStoreRefresh() {
            return storeRefresh;
        }

        /** @param storeRefresh the store gauges' refresh interval */
        public void setStoreRefresh(Duration storeRefresh) {
            this.storeRefresh = storeRefresh;
        }
    }
}
