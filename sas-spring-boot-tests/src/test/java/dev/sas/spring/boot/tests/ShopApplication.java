package dev.sas.spring.boot.tests;

import dev.sas.core.Agent;
import dev.sas.core.Codec;
import dev.sas.core.SasClient;
import dev.sas.core.TaskId;
import dev.sas.core.Workflow;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.security.config.Customizer;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.core.userdetails.UserDetailsService;
import org.springframework.security.provisioning.InMemoryUserDetailsManager;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.security.web.servlet.util.matcher.PathPatternRequestMatcher;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

/**
 * A shop as a user writes it, the same source on Spring Boot 4 and 3: a web server with Actuator, a
 * JDBC data source, an agent bean, workflow beans calling it, and a {@code @Transactional} service
 * that writes an order row and submits its task. Nothing SAS-specific is configured by hand.
 */
@SpringBootApplication
public class ShopApplication {

    /** Released by a test to let a {@code slow} step finish; counted down when one has started. */
    static volatile CountDownLatch slowStarted = new CountDownLatch(1);
    static volatile CountDownLatch slowRelease = new CountDownLatch(1);

    /**
     * Everything is open but the console's actions, which need an operator: user {@code ops} holds
     * the operator role, {@code viewer} does not. The console has its own origin checks and takes
     * no cookie-borne authority from the page, so Spring's CSRF token is not asked of it.
     */
    @Bean
    SecurityFilterChain security(HttpSecurity http) throws Exception {
        return http.authorizeHttpRequests(a -> a.anyRequest().permitAll())
                .httpBasic(Customizer.withDefaults())
                .csrf(c -> c.ignoringRequestMatchers(PathPatternRequestMatcher.withDefaults().matcher("/sas/**")))
                .build();
    }

    @Bean
    UserDetailsService users() {
        return new InMemoryUserDetailsManager(
                User.withUsername("ops").password("{noop}ops-secret").roles("SAS_OPERATOR").build(),
                User.withUsername("viewer").password("{noop}viewer-secret").roles("VIEWER").build());
    }

    @Bean
    Agent<String, String> payments() {
        return Agent.of("payments", request -> CompletableFuture.completedFuture("paid " + request.payload()));
    }

    @Bean
    Workflow<String> confirmOrder(Agent<String, String> payments) {
        return Workflow.builder("confirm-order", Codec.string())
                .step("charge", s -> s.call(payments, ctx -> ctx.input()))
                .step("confirm", s -> s.execute(ctx -> "confirmed " + ctx.input()))
                .build();
    }

    @Bean
    Workflow<String> slow() {
        return Workflow.builder("slow", Codec.string())
                .step("wait", s -> s.execute(ctx -> {
                    slowStarted.countDown();
                    if (!slowRelease.await(2, TimeUnit.MINUTES)) {
                        throw new IllegalStateException("the test never released the step");
                    }
                    return "done";
                }))
                .build();
    }

    /** Spans the application's OpenTelemetry records (a context's close shuts its exporter down). */
    @Bean
    InMemorySpanExporter spans() {
        return InMemorySpanExporter.create();
    }

    @Bean
    OpenTelemetry openTelemetry(InMemorySpanExporter spans) {
        return OpenTelemetrySdk.builder()
                .setTracerProvider(SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(spans)).build())
                .build();
    }

    /** Writes an order and submits its task in one transaction. */
    @Service
    public static class Orders {
        private final JdbcTemplate jdbc;
        private final SasClient sas;
        private final Workflow<String> confirmOrder;
        private final String table;

        Orders(JdbcTemplate jdbc, SasClient sas, @Qualifier("confirmOrder") Workflow<String> confirmOrder,
                @Value("${shop.orders-table:shop_orders}") String table) {
            this.jdbc = jdbc;
            this.sas = sas;
            this.confirmOrder = confirmOrder;
            this.table = table;
            jdbc.execute("CREATE TABLE IF NOT EXISTS " + table + " (id VARCHAR(64) PRIMARY KEY)");
        }

        /**
         * @param orderId the order
         * @param failAfterSubmit whether to throw after the submit, rolling both back
         * @return the task
         */
        @Transactional
        public TaskId place(String orderId, boolean failAfterSubmit) {
            jdbc.update("INSERT INTO " + table + " (id) VALUES (?)", orderId);
            TaskId task = sas.submit(confirmOrder, orderId, orderId).id();
            if (failAfterSubmit) {
                throw new IllegalStateException("payment declined");
            }
            return task;
        }

        /** @return whether the order row exists */
        public boolean exists(String orderId) {
            return jdbc.queryForObject("SELECT COUNT(*) FROM " + table + " WHERE id = ?", Integer.class, orderId) == 1;
        }
    }
}
